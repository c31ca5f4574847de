"""The per-arm figures of a run (report.json's `RunReport`, `perarm.py`): outcomes, calls,
tokens, cost and sizes; latency percentiles in which a cut turn ranks above every completed one
(`latency.py`); the study's output guard per arm (`guard_tally.py`).

Submodules are imported where used (not here), so importing one loads only what it needs."""

__all__ = ["guard_tally", "latency", "perarm"]
