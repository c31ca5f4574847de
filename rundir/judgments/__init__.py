"""Judgment sets: what `harness judge` leaves in `--out SET`, for the report and the audit: the
set's records and its folder's layout (records.py), its files written and read back (files.py),
and the seal kept outside it (seal.py).

Submodules are imported where used (not here), so importing one loads only what it needs."""

__all__ = ["files", "records", "seal"]
