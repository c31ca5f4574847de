"""Sealing a finished run: its files listed in run.json's manifest (rundir/runs/manifest.py), with
the hashes that tie its numbers to its inputs, and the header rewritten.

Apart from manifest.py because it reads and writes the header (rundir/runs/header.py), which holds a
Manifest: the two models' modules then import one way only.
"""

from __future__ import annotations

from pathlib import Path

from rundir.runs.header import RunHeader, now_iso, write_header
from rundir.runs.manifest import Manifest, file_sha256, list_files, tool_commit, tool_version


def write_manifest(
    run_dir: Path,
    header: RunHeader,
    *,
    prices: Path | None = None,
    ledger: Path | str | None = None,
    ledger_chain: tuple[int, str] | None = None,
    images: dict[str, str] | None = None,
) -> Manifest:
    """List the run's files in `header.manifest` and rewrite run.json. Call it when nothing
    writes into `run_dir` any more. `prices` and `ledger` are the files a live run used (the
    audit's defaults); `ledger_chain` is that ledger's length and head when the run ended
    (`ledger.ledger.chain_end`: the caller reads it, this room imports nothing of the ledger's); a
    study run's hashes come from `header.study`."""
    study = header.study
    prices_sha = study.prices_sha256 if study else None
    if prices is not None and prices.is_file():
        prices_sha = file_sha256(prices)
    manifest = Manifest(
        written=now_iso(),
        tool_version=tool_version(),
        tool_commit=tool_commit(),
        study_sha256=study.study_sha256 if study else None,
        compose_sha256=study.compose_sha256 if study else None,
        items_sha256=study.items_sha256 if study else None,
        prices_sha256=prices_sha,
        prices_path=str(prices.resolve()) if prices is not None else None,
        stubs_sha256=header.stubs_sha256,
        images=dict(images or {}),
        # A file's absolute path, or a database's URL as given (never with a password).
        ledger_path=str(ledger.resolve()) if isinstance(ledger, Path) else ledger,
        files=list_files(run_dir),
    )
    if ledger_chain is not None and header.mode == "live":
        manifest.ledger_entries, manifest.ledger_head = ledger_chain
    header.manifest = manifest
    write_header(run_dir, header)
    return manifest
