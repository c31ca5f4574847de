"""The bookkeeping of turns as they run: an attempt's turn records (those of an arm that met a
bound too), the one retry policy for the machinery's failures, the run's tally, and Ctrl-C.

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

from harness.run.turns.limit_check import describe, limit_records
from harness.run.turns.retries import BACKOFF_S, MAX_RETRIES
from harness.run.turns.signals import CtrlC
from harness.run.turns.tally import RunTally
from harness.run.turns.turn_records import AttemptRecords

__all__ = [
    "BACKOFF_S",
    "MAX_RETRIES",
    "AttemptRecords",
    "CtrlC",
    "RunTally",
    "describe",
    "limit_records",
]
