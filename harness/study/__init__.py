"""The study: the study file's models (model.py), its arms (arms.py) and items (items.py), the
coupled-study and engine-parity rules checked when it loads (coupling.py, parity.py), and the
loader that reads and checks all of it before anything starts (load.py).

Other parts import the study through this face: `from harness.study import load_study, Study`.
"""

from harness.study.arms import ArmSpec
from harness.study.coupling import Coupling, GatePair, GateSection, coupling_problems, turn_order
from harness.study.items import Item, TurnScript, load_items
from harness.study.load import load_study, sha256
from harness.study.model import DEFAULT_MAX_FAILURE_RATE, Study
from harness.study.parity import Parity, parity_for, parity_problems

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
