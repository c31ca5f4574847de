"""The live pilot (`harness pilot STUDY --legs FILE --cap USD`, docs/pilot.md): the legs file, each
leg's cost projected from a record run before any spend and its cost afterwards, and the legs
run one after another under one ledger stage.

Submodules are imported where used (not here), so importing one loads only what it
needs."""

from harness.run.pilot.legs import load_legs
from harness.run.pilot.pilot import default_stage, run_pilot

__all__ = [
    "default_stage",
    "load_legs",
    "run_pilot",
]
