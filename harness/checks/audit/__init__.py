"""`harness audit RUN_DIR`: a finished run's money, hashes and promises recomputed from its files,
with no key. run.py is the entry (audit_run, audit.json's record); each other module is one
group of its checks: money, files, ledger, protocol, identity, context and prompt (a coupled
run's handed turn context), parity, limits, proxy_egress and guard.

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.checks.audit.money import token_counts
    from harness.checks.audit.run import AUDIT_FILE, audit_run

# What this face offers is loaded on first use (PEP 562): a user of one name loads the module
# that defines it, not the whole part (a judge's process must not load scipy).
_OFFERED = {
    "AUDIT_FILE": "harness.checks.audit.run",
    "audit_run": "harness.checks.audit.run",
    "token_counts": "harness.checks.audit.money",
}


def __getattr__(name: str) -> Any:
    if name not in _OFFERED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_OFFERED[name]), name)


__all__ = [
    "AUDIT_FILE",
    "audit_run",
    "token_counts",
]
