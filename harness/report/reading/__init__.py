"""What the report reads, each file read once, hashed and checked against the runs: the runs
themselves (`rundata.py`; whether they finished, `unfinished.py`; the study's script,
`script.py`) and the optional inputs (`inputs.py`: gate, ledger, prices, judgments
`judged.py`, the analysis plan `analysis.py`, the pack `pack.py`, gold answers `gold.py`, a
scan, provenance, header), refused in one line when one is not of these runs (`crosscheck.py`).

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.report.reading.analysis import CONDITION, Analysis, Endpoint, load_analysis
    from harness.report.reading.crosscheck import check_inputs, no_duplicates
    from harness.report.reading.gold import score_gold
    from harness.report.reading.inputs import Inputs, load_inputs
    from harness.report.reading.judged import Judgment, PairJudgment
    from harness.report.reading.rundata import ADDENDUM_NOW, ReadFile, RunData, load_runs, read_file
    from harness.report.reading.script import user_messages
    from harness.report.reading.unfinished import (
        Progress,
        progress,
        refuse_unless_partial,
        run_status,
    )

# What this face offers is loaded on first use (PEP 562): a user of one name loads the module
# that defines it, not the whole part (a judge's process must not load scipy).
_OFFERED = {
    "ADDENDUM_NOW": "harness.report.reading.rundata",
    "Analysis": "harness.report.reading.analysis",
    "CONDITION": "harness.report.reading.analysis",
    "Endpoint": "harness.report.reading.analysis",
    "Inputs": "harness.report.reading.inputs",
    "Judgment": "harness.report.reading.judged",
    "PairJudgment": "harness.report.reading.judged",
    "Progress": "harness.report.reading.unfinished",
    "ReadFile": "harness.report.reading.rundata",
    "RunData": "harness.report.reading.rundata",
    "check_inputs": "harness.report.reading.crosscheck",
    "load_analysis": "harness.report.reading.analysis",
    "load_inputs": "harness.report.reading.inputs",
    "load_runs": "harness.report.reading.rundata",
    "no_duplicates": "harness.report.reading.crosscheck",
    "progress": "harness.report.reading.unfinished",
    "read_file": "harness.report.reading.rundata",
    "refuse_unless_partial": "harness.report.reading.unfinished",
    "run_status": "harness.report.reading.unfinished",
    "score_gold": "harness.report.reading.gold",
    "user_messages": "harness.report.reading.script",
}


def __getattr__(name: str) -> Any:
    if name not in _OFFERED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_OFFERED[name]), name)


__all__ = [
    "ADDENDUM_NOW",
    "CONDITION",
    "Analysis",
    "Endpoint",
    "Inputs",
    "Judgment",
    "PairJudgment",
    "Progress",
    "ReadFile",
    "RunData",
    "check_inputs",
    "load_analysis",
    "load_inputs",
    "load_runs",
    "no_duplicates",
    "progress",
    "read_file",
    "refuse_unless_partial",
    "run_status",
    "score_gold",
    "user_messages",
]
