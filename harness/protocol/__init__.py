"""The study's registered protocol: frozen files (lock.py) and their addendum (addendum.py)."""

from harness.protocol.addendum import (
    Addendum,
    Deviation,
    load_addendum,
    removed_since,
    run_deviations,
)
from harness.protocol.lock import CheckedProtocol, check_protocol, freeze, lock_path

__all__ = [
    "Addendum",
    "CheckedProtocol",
    "Deviation",
    "check_protocol",
    "freeze",
    "load_addendum",
    "lock_path",
    "removed_since",
    "run_deviations",
]
