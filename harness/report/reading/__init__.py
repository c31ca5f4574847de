"""What the report reads, each file read once, hashed and checked against the runs: the runs
themselves (`rundata.py`; whether they finished, `unfinished.py`; the study's script,
`script.py`) and the optional inputs (`inputs.py`: gate, ledger, prices, judgments
`judged.py`, the analysis plan `analysis.py`, the pack `pack.py`, gold answers `gold.py`, a
scan, provenance, header), refused in one line when one is not of these runs (`crosscheck.py`).

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

from harness.report.reading.analysis import CONDITION, Analysis, Endpoint, load_analysis
from harness.report.reading.crosscheck import check_inputs, no_duplicates
from harness.report.reading.gold import score_gold
from harness.report.reading.inputs import Inputs, load_inputs
from harness.report.reading.judged import Judgment, PairJudgment
from harness.report.reading.rundata import ADDENDUM_NOW, ReadFile, RunData, load_runs, read_file
from harness.report.reading.script import user_messages
from harness.report.reading.unfinished import Progress, progress, refuse_unless_partial, run_status

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
