"""Pure helpers of the docker backend: what compose.yaml says, files.

Kept apart from backend.py so the backend module stays about containers and networks.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from rundir.atomic import write_atomic

__all__ = ["compose_images", "read_text", "write_atomic"]  # backend.py takes write_atomic from here


def compose_images(compose: Path | None) -> dict[str, str]:
    """service -> image from compose.yaml (the subset honoured: services' image)."""
    if compose is None:
        return {}
    from ruamel.yaml import YAML

    data = YAML(typ="safe").load(compose.read_text(encoding="utf-8")) or {}
    services = data.get("services") or {}
    return {name: str(s["image"]) for name, s in services.items() if (s or {}).get("image")}


def read_text(path: Path) -> str:
    with contextlib.suppress(OSError):
        return path.read_text(encoding="utf-8", errors="replace")
    return ""
