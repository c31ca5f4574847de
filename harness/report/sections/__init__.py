"""The report's sections, each built from the `Context` into a format-free `Section`
(harness/report/model.py): the frame around the results, sections 1-4, 12 and 13 (`frame.py`,
with the paper trail `paper_trail.py`, the pins `identity.py`, outcomes `outcomes.py` and refused
connections `strays.py`); section 5, metrics and judges (`judging.py`); 6 and 7, results and
pairwise verdicts (`verdicts.py`, one orientation for every difference `orientation.py`, links
into the drill-down `drill_link.py`); 8-11, cost, latency, the gate and the ledger (`money.py`,
with `ceilings.py`, `netlatency.py`, `reuse.py`); and the first screen before section 1
(`first_screen.py`). The confirmatory "Verdicts" is harness/report/confirmatory/section.py.

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

import importlib
from typing import TYPE_CHECKING, Any

from harness.report.sections.first_screen import first_screen

if TYPE_CHECKING:
    from harness.report.sections import frame, judging, money, verdicts
    from harness.report.sections.first_screen import FirstScreen
    from harness.report.sections.paper_trail import without_voided
    from harness.report.sections.verdicts import family_of, kept_pairs

# What this face offers is loaded on first use (PEP 562): a user of one name loads the module
# that defines it, not the whole part (a judge's process must not load scipy).
_OFFERED = {
    "FirstScreen": "harness.report.sections.first_screen",
    "family_of": "harness.report.sections.verdicts",
    "kept_pairs": "harness.report.sections.verdicts",
    "without_voided": "harness.report.sections.paper_trail",
}


def __getattr__(name: str) -> Any:
    if name not in _OFFERED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_OFFERED[name]), name)


__all__ = [
    "FirstScreen",
    "family_of",
    "first_screen",
    "frame",
    "judging",
    "kept_pairs",
    "money",
    "verdicts",
    "without_voided",
]
