"""The per-arm figures of a run (report.json's `RunReport`, `perarm.py`): outcomes, calls,
tokens, cost and sizes; latency percentiles in which a cut turn ranks above every completed one
(`latency.py`); the study's output guard per arm (`guard_tally.py`).

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

import importlib
from typing import TYPE_CHECKING, Any

from harness.report.figures.latency import latency

if TYPE_CHECKING:
    from harness.report.figures.guard_tally import guard_table
    from harness.report.figures.latency import Latency
    from harness.report.figures.perarm import (
        RunReport,
        build_report,
        dropped_items,
        response_size,
        turn_costs,
    )

# What this face offers is loaded on first use (PEP 562): a user of one name loads the module
# that defines it, not the whole part (a judge's process must not load scipy).
_OFFERED = {
    "Latency": "harness.report.figures.latency",
    "RunReport": "harness.report.figures.perarm",
    "build_report": "harness.report.figures.perarm",
    "dropped_items": "harness.report.figures.perarm",
    "guard_table": "harness.report.figures.guard_tally",
    "response_size": "harness.report.figures.perarm",
    "turn_costs": "harness.report.figures.perarm",
}


def __getattr__(name: str) -> Any:
    if name not in _OFFERED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_OFFERED[name]), name)


__all__ = [
    "Latency",
    "RunReport",
    "build_report",
    "dropped_items",
    "guard_table",
    "latency",
    "response_size",
    "turn_costs",
]
