"""Pure helpers of the docker backend: what compose.yaml says, the proxy's options, files.

Kept apart from docker.py so the backend module stays about containers and networks.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

from harness.backends.base import ProxySettings


def compose_images(compose: Path | None) -> dict[str, str]:
    """service -> image from compose.yaml (the subset honoured: services' image)."""
    if compose is None:
        return {}
    from ruamel.yaml import YAML

    data = YAML(typ="safe").load(compose.read_text(encoding="utf-8")) or {}
    services = data.get("services") or {}
    return {name: str(s["image"]) for name, s in services.items() if (s or {}).get("image")}


def proxy_options(settings: ProxySettings) -> dict[str, Any]:
    options: dict[str, Any] = {
        "harness_mode": settings.mode,
        "harness_run_id": settings.run_id,
        "harness_run_dir": str(settings.run_dir.resolve()),
        "harness_stubs": str(settings.stubs.resolve()) if settings.stubs else "",
        "harness_pins": str(settings.pins_file.resolve()) if settings.pins_file else "",
        "harness_upstreams": settings.upstreams,
        "harness_deadline": settings.deadline_s,
    }
    # Fields other backends' work added to ProxySettings; read softly so either version works.
    masks = getattr(settings, "masks", None)
    if masks:
        options["harness_masks"] = masks
    replay_from = getattr(settings, "replay_from", None)
    if settings.mode == "replay":
        options["harness_replay_from"] = str(Path(replay_from).resolve()) if replay_from else ""
    if settings.mode == "live":
        options |= {
            "harness_cap": settings.cap,
            "harness_prices": str(settings.prices.resolve()) if settings.prices else "",
            "harness_ledger": str(settings.ledger.resolve()) if settings.ledger else "",
            "harness_stage": settings.stage,
            "harness_stage_cap": settings.stage_cap,
        }
    return options


def read_text(path: Path) -> str:
    with contextlib.suppress(OSError):
        return path.read_text(encoding="utf-8", errors="replace")
    return ""


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
