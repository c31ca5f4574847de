"""Running a study. At the top the entries: the pipeline (pipeline.py), the determinism gate's two
runs (gate.py) and the orchestrator with its two ways to run an item (item_on_arm.py,
coupled_item.py) and what both use of it (driver.py); beside them its parts: stages/, turns/,
watch/, memory/, control/, live/ and pilot/, each saying what it holds. It uses isolation/ to
start things and rundir/ to write."""

from harness.run.gate import run_gate
from harness.run.pipeline import RunRequest, RunResult, run_study

__all__ = [
    "RunRequest",
    "RunResult",
    "run_gate",
    "run_study",
]
