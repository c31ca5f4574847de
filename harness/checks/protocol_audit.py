"""The audit's check of a run's protocol paper trail (run.json `study.protocol`, rundir/protocol.py)
and of its voids (rundir/voids.py).

- each frozen file's hash in run.json equals the study's lock (protocol.lock.json) and the file's
  bytes now: an edited header, lock or file is a discrepancy naming it;
- the addendum copied into the run hashes to what run.json says; an addendum in the study that
  has grown since is a note (entries may be added after a run, e.g. a deviation found later);
- voids.jsonl, written after the run and so outside its manifest, parses.
A study folder that cannot be found (a run copied elsewhere) is a note: only the run's own files
are then checked. Runs without a protocol are not checked.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from pydantic import ValidationError

from rundir.header import RunHeader
from rundir.protocol import ADDENDUM_COPY, addendum_copies
from rundir.voids import VOIDS_FILE, read_voids

LOCK_FILE = "protocol.lock.json"  # harness/protocol/lock.py's, read here as plain JSON


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _locked(lock: Path) -> dict[str, str] | None:
    try:
        files = json.loads(lock.read_text(encoding="utf-8"))["files"]
        return {str(f["path"]): str(f["sha256"]) for f in files}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def protocol_findings(run_dir: Path, header: RunHeader) -> tuple[list[tuple[str, str]], list[str]]:
    """(where, what) discrepancies, and notes, for the run's protocol hashes and voids."""
    found: list[tuple[str, str]] = []
    notes: list[str] = []
    try:
        read_voids(run_dir)
    except (ValueError, ValidationError) as e:
        found.append((VOIDS_FILE, f"does not parse: {str(e).splitlines()[0]}"))
    study = header.study
    record = study.protocol if study is not None else None
    if study is None or record is None:
        return found, notes
    copies = addendum_copies(run_dir)
    if record.addendum_sha256 is not None:
        hashes = [_sha(copy) for copy in copies]
        if not copies:
            found.append((ADDENDUM_COPY, "missing: run.json records an addendum"))
        elif record.addendum_sha256 not in hashes:
            found.append(
                (
                    "run.json",
                    f"addendum SHA-256 {record.addendum_sha256} is not the run's copy's "
                    f"({hashes[0]})",
                )
            )
    folder = Path(study.study_path).parent
    if not Path(study.study_path).is_file():
        notes.append(
            f"study {study.study_path} not found: frozen files re-checked against run.json only"
        )
        return found, notes
    locked = _locked(folder / LOCK_FILE)
    for frozen in record.frozen:
        where = f"run.json (frozen {frozen.path})"
        if locked is None or frozen.path not in locked:
            found.append((where, f"{folder / LOCK_FILE} has no lock for it"))
        elif locked[frozen.path] != frozen.sha256:
            found.append(
                (where, f"SHA-256 {frozen.sha256} is not the lock's {locked[frozen.path]}")
            )
        path = folder / frozen.path
        if not path.is_file():
            notes.append(f"frozen file {frozen.path} not found at {path}: not re-hashed")
        elif _sha(path) != frozen.sha256:
            found.append((where, f"SHA-256 {frozen.sha256} is not the file's now ({_sha(path)})"))
    if record.addendum is not None:
        current = folder / record.addendum
        if current.is_file() and _sha(current) != record.addendum_sha256:
            notes.append(
                f"the study's addendum {record.addendum} changed since the run (entries added "
                f"later are not the run's); the run's copy is {ADDENDUM_COPY}"
            )
    return found, notes
