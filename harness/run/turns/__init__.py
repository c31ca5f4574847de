"""The bookkeeping of turns as they run: an attempt's turn records (those of an arm that met a
bound too), the one retry policy for the machinery's failures, the run's tally, and Ctrl-C.

Submodules are imported where used (not here), so importing one loads only what it
needs."""

__all__ = [
    "limit_check",
    "retries",
    "signals",
    "tally",
    "turn_records",
]
