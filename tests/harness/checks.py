"""Studies for the gate, audit and manifest tests: the gate toy arm, optional mask and vendors."""

from __future__ import annotations

import json
from pathlib import Path

GATE_ARM = Path(__file__).with_name("gate_arm.py")
ITEMS = [
    {"id": "one", "clock": "2024-05-01T10:00:00", "turns": [{"user": "hello"}, {"user": "more"}]},
    {"id": "two", "clock": "2024-05-02T10:00:00", "turns": [{"user": "again"}]},
]


def gate_study(
    folder: Path,
    volatile: str = "",
    mask: list[str] | None = None,
    vendors: dict[str, str] | None = None,
    ca_bundle: Path | None = None,
) -> Path:
    """A study with one gate toy arm; `vendors` points live mode at a fake vendor."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "items.jsonl").write_text("".join(json.dumps(item) + "\n" for item in ITEMS))
    lines = ['name = "gate-test"', 'items = "items.jsonl"', "deadline_ms = 20000"]
    if mask is not None:
        lines.append(f"mask = {json.dumps(mask)}")
    if ca_bundle is not None:
        lines.append(f"ca_bundle = {json.dumps(str(ca_bundle))}")
    lines += ["[arms.toy]", f"command = {json.dumps(f'python {GATE_ARM}')}"]
    lines.append(f"env = {{ GATE_ARM_VOLATILE = {json.dumps(volatile)} }}")
    if vendors:
        lines.append("[vendors]")
        lines += [f"{name} = {json.dumps(url)}" for name, url in vendors.items()]
    study = folder / "study.toml"
    study.write_text("\n".join(lines) + "\n")
    return study
