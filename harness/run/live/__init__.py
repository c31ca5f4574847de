"""What a live run needs before it spends: its admission (a cap, V0's suite record, a clean record
run and a passing gate, the keys and the ledger's branch), the one live job at a time, every model
priced, and the arms a failed pair gate leaves out; and, after a crash, the settlement of the run
its proxy left open.

Submodules are imported where used (not here), so importing one loads only what it
needs."""

__all__ = [
    "admission",
    "dropped",
    "live_checks",
    "live_job",
    "priced_models",
    "settle_open",
    "suite_record",
]
