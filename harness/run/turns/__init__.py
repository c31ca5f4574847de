"""The bookkeeping of turns as they run: an attempt's turn records (those of an arm that met a
bound too), the one retry policy for the machinery's failures, the run's tally, and Ctrl-C.

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.run.turns.limit_check import describe, limit_records
    from harness.run.turns.retries import BACKOFF_S, MAX_RETRIES
    from harness.run.turns.signals import CtrlC
    from harness.run.turns.tally import RunTally
    from harness.run.turns.turn_records import AttemptRecords

# What this face offers is loaded on first use (PEP 562): a user of one name loads the module
# that defines it, not the whole part (a judge's process must not load scipy).
_OFFERED = {
    "AttemptRecords": "harness.run.turns.turn_records",
    "BACKOFF_S": "harness.run.turns.retries",
    "CtrlC": "harness.run.turns.signals",
    "MAX_RETRIES": "harness.run.turns.retries",
    "RunTally": "harness.run.turns.tally",
    "describe": "harness.run.turns.limit_check",
    "limit_records": "harness.run.turns.limit_check",
}


def __getattr__(name: str) -> Any:
    if name not in _OFFERED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_OFFERED[name]), name)


__all__ = [
    "BACKOFF_S",
    "MAX_RETRIES",
    "AttemptRecords",
    "CtrlC",
    "RunTally",
    "describe",
    "limit_records",
]
