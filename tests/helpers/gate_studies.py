"""Studies for the gate, audit and manifest tests: the gate toy arm, optional mask and vendors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.study_builder import StudyBuilder
from tests.toy_arms import TOY_ARMS

GATE_ARM = TOY_ARMS / "gate_arm.py"
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
    fields: dict[str, Any] = {"deadline_ms": 20000}
    if mask is not None:
        fields["mask"] = mask
    if ca_bundle is not None:
        fields["ca_bundle"] = str(ca_bundle)
    if vendors:
        fields["vendors"] = vendors
    study = StudyBuilder(name="gate-test", items=ITEMS, fields=fields)
    return study.arm("toy", f"python {GATE_ARM}", GATE_ARM_VOLATILE=volatile).write(folder)
