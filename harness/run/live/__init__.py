"""What a live run needs before it spends: its admission (a cap, V0's suite record, a clean record
run and a passing gate, the keys and the ledger's branch), the one live job at a time, every model
priced, and the arms a failed pair gate leaves out; and, after a crash, the settlement of the run
its proxy left open.

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

import importlib
from typing import TYPE_CHECKING, Any

from harness.run.live.live_job import live_job

if TYPE_CHECKING:
    from harness.run.live.admission import admit_live, check_live_needs, passing_record_run
    from harness.run.live.dropped import dropped_followers, without_dropped
    from harness.run.live.live_checks import cap_usd, check_branch, check_keys
    from harness.run.live.live_job import commit_to_branch
    from harness.run.live.priced_models import check_priced_models
    from harness.run.live.settle_open import settle_left_open
    from harness.run.live.suite_record import check_suite

# What this face offers is loaded on first use (PEP 562): a user of one name loads the module
# that defines it, not the whole part (a judge's process must not load scipy).
_OFFERED = {
    "admit_live": "harness.run.live.admission",
    "cap_usd": "harness.run.live.live_checks",
    "check_branch": "harness.run.live.live_checks",
    "check_keys": "harness.run.live.live_checks",
    "check_live_needs": "harness.run.live.admission",
    "check_priced_models": "harness.run.live.priced_models",
    "check_suite": "harness.run.live.suite_record",
    "commit_to_branch": "harness.run.live.live_job",
    "dropped_followers": "harness.run.live.dropped",
    "passing_record_run": "harness.run.live.admission",
    "settle_left_open": "harness.run.live.settle_open",
    "without_dropped": "harness.run.live.dropped",
}


def __getattr__(name: str) -> Any:
    if name not in _OFFERED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_OFFERED[name]), name)


__all__ = [
    "admit_live",
    "cap_usd",
    "check_branch",
    "check_keys",
    "check_live_needs",
    "check_priced_models",
    "check_suite",
    "commit_to_branch",
    "dropped_followers",
    "live_job",
    "passing_record_run",
    "settle_left_open",
    "without_dropped",
]
