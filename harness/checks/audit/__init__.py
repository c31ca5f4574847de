"""`harness audit RUN_DIR`: a finished run's money, hashes and promises recomputed from its files,
with no key. run.py is the entry (audit_run, audit.json's record); each other module is one
group of its checks: money, files, ledger, protocol, identity, context and prompt (a coupled
run's handed turn context), parity, limits, proxy_egress and guard.

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

from harness.checks.audit.money import token_counts
from harness.checks.audit.run import AUDIT_FILE, audit_run

__all__ = [
    "AUDIT_FILE",
    "audit_run",
    "token_counts",
]
