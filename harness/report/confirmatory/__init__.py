"""The confirmatory analysis under a frozen plan (`--analysis`): each declared contrast on each
endpoint with its test and interval (`decision.py`), the validity gates' and ceilings' readings
(`readings.py`), the decision rules' conditions (`conditions.py`), the outcome as a record for
the first screen and report.json (`record.py`), its own section, "Verdicts" (`section.py`), and
`harness plan simulate`, the same rules at zero spend (`simulate.py`). The plan file itself is
read in harness/report/reading/analysis.py.

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

from harness.report.confirmatory.decision import interim_due
from harness.report.confirmatory.section import verdicts_section
from harness.report.confirmatory.simulate import describe, simulate

__all__ = [
    "describe",
    "interim_due",
    "simulate",
    "verdicts_section",
]
