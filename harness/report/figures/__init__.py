"""The per-arm figures of a run (report.json's `RunReport`, `perarm.py`): outcomes, calls,
tokens, cost and sizes; latency percentiles in which a cut turn ranks above every completed one
(`latency.py`); the study's output guard per arm (`guard_tally.py`).

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

from harness.report.figures.guard_tally import guard_table
from harness.report.figures.latency import Latency, latency
from harness.report.figures.perarm import (
    RunReport,
    build_report,
    dropped_items,
    response_size,
    turn_costs,
)

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
