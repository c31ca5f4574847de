"""The live pilot (`harness pilot STUDY --legs FILE --cap USD`, docs/pilot.md): the legs file, each
leg's cost projected from a record run before any spend and its cost afterwards, and the legs
run one after another under one ledger stage.

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

from harness.run.pilot.legs import load_legs
from harness.run.pilot.pilot import default_stage, run_pilot

__all__ = [
    "default_stage",
    "load_legs",
    "run_pilot",
]
