"""What a live run needs before it spends: its cap, keys and ledger branch checked, the one live job
at a time, every model priced, V0's suite record, and the arms a failed pair gate leaves out;
and, after a crash, the settlement of the run its proxy left open.

Submodules are imported where used (not here), so importing one loads only what it
needs."""

__all__ = [
    "dropped",
    "live_checks",
    "live_job",
    "priced_models",
    "settle_open",
    "suite_record",
]
