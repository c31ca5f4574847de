"""What the report reads, each file read once, hashed and checked against the runs: the runs
themselves (`rundata.py`; whether they finished, `unfinished.py`; the study's script,
`script.py`) and the optional inputs (`inputs.py`: gate, ledger, prices, judgments
`judged.py`, the analysis plan `analysis.py`, the pack `pack.py`, gold answers `gold.py`, a
scan, provenance, header), refused in one line when one is not of these runs (`crosscheck.py`).

Submodules are imported where used (not here), so importing one loads only what it needs."""

__all__ = [
    "analysis",
    "crosscheck",
    "gold",
    "inputs",
    "judged",
    "pack",
    "rundata",
    "script",
    "unfinished",
]
