"""The study: the study file's models (model.py), its arms (arms.py) and items (items.py), the
coupled-study and engine-parity rules checked when it loads (coupling.py, parity.py), and the
loader that reads and checks all of it before anything starts (load.py).

Other parts import the study through this face: `from harness.study import load_study, Study`.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.study.arms import ArmSpec
    from harness.study.coupling import (
        Coupling,
        GatePair,
        GateSection,
        coupling_problems,
        turn_order,
    )
    from harness.study.items import Item, TurnScript, load_items
    from harness.study.load import load_study, sha256
    from harness.study.model import DEFAULT_MAX_FAILURE_RATE, Study
    from harness.study.parity import Parity, parity_for, parity_problems

# What this face offers is loaded on first use (PEP 562): a user of one name loads the module
# that defines it, not the whole part (a judge's process must not load scipy).
_OFFERED = {
    "ArmSpec": "harness.study.arms",
    "Coupling": "harness.study.coupling",
    "DEFAULT_MAX_FAILURE_RATE": "harness.study.model",
    "GatePair": "harness.study.coupling",
    "GateSection": "harness.study.coupling",
    "Item": "harness.study.items",
    "Parity": "harness.study.parity",
    "Study": "harness.study.model",
    "TurnScript": "harness.study.items",
    "coupling_problems": "harness.study.coupling",
    "load_items": "harness.study.items",
    "load_study": "harness.study.load",
    "parity_for": "harness.study.parity",
    "parity_problems": "harness.study.parity",
    "sha256": "harness.study.load",
    "turn_order": "harness.study.coupling",
}


def __getattr__(name: str) -> Any:
    if name not in _OFFERED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_OFFERED[name]), name)


__all__ = [
    "DEFAULT_MAX_FAILURE_RATE",
    "ArmSpec",
    "Coupling",
    "GatePair",
    "GateSection",
    "Item",
    "Parity",
    "Study",
    "TurnScript",
    "coupling_problems",
    "load_items",
    "load_study",
    "parity_for",
    "parity_problems",
    "sha256",
    "turn_order",
]
