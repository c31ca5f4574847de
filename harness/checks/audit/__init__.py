"""`harness audit RUN_DIR`: a finished run's money, hashes and promises recomputed from its files,
with no key. run.py is the entry (audit_run, audit.json's record); each other module is one
group of its checks: money, files, ledger, protocol, identity, context and prompt (a coupled
run's handed turn context), parity, limits, proxy_egress and guard.

Submodules are imported where used (not here), so importing one loads only what it needs."""

__all__ = [
    "context",
    "files",
    "guard",
    "identity",
    "ledger",
    "limits",
    "money",
    "parity",
    "prompt",
    "protocol",
    "proxy_egress",
    "run",
]
