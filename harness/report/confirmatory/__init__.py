"""The confirmatory analysis under a frozen plan (`--analysis`): each declared contrast on each
endpoint with its test and interval (`decision.py`), the validity gates' and ceilings' readings
(`readings.py`), the decision rules' conditions (`conditions.py`), the outcome as a record for
the first screen and report.json (`record.py`), its own section, "Verdicts" (`section.py`), and
`harness plan simulate`, the same rules at zero spend (`simulate.py`). The plan file itself is
read in harness/report/reading/analysis.py.

Submodules are imported where used (not here), so importing one loads only what it needs."""

from harness.report.confirmatory.decision import interim_due
from harness.report.confirmatory.section import verdicts_section
from harness.report.confirmatory.simulate import describe, simulate

__all__ = [
    "describe",
    "interim_due",
    "simulate",
    "verdicts_section",
]
