"""The run manifest: run.json's list of every file of the run with its SHA-256 and size, and the
hashes that tie a run's numbers to its inputs (study, compose, items, prices, stubs, images) and
to the tool that produced them.

Written once, at the end of a run, after every process that writes into the run directory has
stopped; an audit re-hashes the files against it (harness/checks/audit/run.py). Files that are
written into a run directory after the run by other tools (audit.json, gate.json) are not listed;
the voids `harness void` appends are not either, but each one moves the manifest's `voids` count
and `voids_head` (the end of their hash chain, rundir/runs/voids.py).
"""

from __future__ import annotations

import hashlib
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from rundir.model import RunDirModel

MANIFEST_SCHEMA: Literal[1] = 1
REPO = Path(__file__).resolve().parents[1]
# The header itself (it holds the manifest) and what later tools add to a finished run.
NOT_LISTED = frozenset(
    {"run.json", "run.json.tmp", "audit.json", "gate.json", "voids.jsonl"}  # rundir/runs/voids.py
)
_CHUNK = 1 << 20


class ManifestFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str  # relative to the run directory, with forward slashes
    sha256: str
    size: int


class Manifest(RunDirModel):
    schema_: Literal[1] = Field(MANIFEST_SCHEMA, alias="schema")
    written: str
    tool_version: str
    tool_commit: str | None = None  # the git commit of the harness checkout, when there is one
    study_sha256: str | None = None
    compose_sha256: str | None = None
    items_sha256: str | None = None
    prices_sha256: str | None = None
    prices_path: str | None = None  # the table the run was priced with (the audit's default)
    stubs_sha256: str | None = None
    images: dict[str, str] = Field(default_factory=dict)  # service -> image id (docker)
    ledger_path: str | None = None
    # The ledger's length and head when the run ended: a later audit checks the chain still
    # holds that entry, which catches removing the ledger's last lines (verify() cannot).
    ledger_entries: int | None = None
    ledger_head: str | None = None
    files: list[ManifestFile] = Field(default_factory=list)
    # voids.jsonl (rundir/runs/voids.py), written after the run: how many records it holds and the
    # SHA-256 of its last line, set by `harness void`, so a deleted or cut file is caught.
    voids: int = 0
    voids_head: str | None = None


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def list_files(run_dir: Path) -> list[ManifestFile]:
    files = []
    for path in sorted(p for p in run_dir.rglob("*") if p.is_file()):
        relative = path.relative_to(run_dir).as_posix()
        if relative in NOT_LISTED:
            continue
        files.append(
            ManifestFile(path=relative, sha256=file_sha256(path), size=path.stat().st_size)
        )
    return files


def tool_version() -> str:
    try:
        return metadata.version("harness")
    except metadata.PackageNotFoundError:
        return "unknown"


def tool_commit() -> str | None:
    if not (REPO / ".git").exists():
        return None
    try:
        done = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.strip() or None
