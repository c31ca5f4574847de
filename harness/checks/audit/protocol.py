"""The audit's check of a run's protocol paper trail (run.json `study.protocol`,
rundir/runs/protocol.py) and of its voids (rundir/runs/voids.py).

- each frozen file's hash in run.json equals the study's lock (protocol.lock.json) and the file's
  bytes now: an edited header, lock or file is a discrepancy naming it;
- the addendum copied into the run hashes to what run.json says; an addendum in the study that
  has grown since is a note (entries may be added after a run, e.g. a deviation found later), an
  amendment it gained dated before a live run a note that it was backdated (a deviation), and
  an entry of the run's copy it lost a discrepancy (an addendum only grows);
- voids.jsonl, written after the run and so outside its manifest's file list, parses, voids only
  this run's items that ran, and is the hash chain the manifest's `voids`/`voids_head` end
  (rundir/runs/voids.py): a forged, copied, cut or deleted void is a discrepancy.
A study folder that cannot be found (a run copied elsewhere) is a note: only the run's own files
are then checked. Runs without a protocol are not checked.
"""

from __future__ import annotations

import hashlib
import json
from contextlib import suppress
from pathlib import Path

from rundir.runs import ADDENDUM_COPY, VOIDS_FILE, RunHeader, addendum_copies, void_problems

LOCK_FILE = "protocol.lock.json"  # harness/protocol/lock.py's, read here as plain JSON


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _locked(lock: Path) -> dict[str, str] | None:
    try:
        files = json.loads(lock.read_text(encoding="utf-8"))["files"]
        return {str(f["path"]): str(f["sha256"]) for f in files}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _items_ran(run_dir: Path) -> set[str]:
    """The items of the run's turns (a merged run: its shards' too), read as plain JSON."""
    ran: set[str] = set()
    for turns in [run_dir / "turns.jsonl", *sorted(run_dir.glob("shards/*/turns.jsonl"))]:
        if turns.is_file():
            with open(turns, encoding="utf-8") as f:
                for line in f:
                    with suppress(ValueError, AttributeError):
                        ran.add(str(json.loads(line).get("item")))
    return ran


def protocol_findings(run_dir: Path, header: RunHeader) -> tuple[list[tuple[str, str]], list[str]]:
    """(where, what) discrepancies, and notes, for the run's protocol hashes and voids."""
    found: list[tuple[str, str]] = []
    notes: list[str] = []
    ran = _items_ran(run_dir)
    for problem in void_problems(run_dir, header.run_id, header.manifest, ran):
        found.append((VOIDS_FILE, problem))
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
            _addendum_since(copies, current, header, found, notes)
    return found, notes


def _addendum_since(
    copies: list[Path],
    current: Path,
    header: RunHeader,
    found: list[tuple[str, str]],
    notes: list[str],
) -> None:
    """The study's addendum only grows: an entry of the run's copy it lost is a discrepancy; an
    amendment it gained that is dated before a live run was backdated (that run's deviation)."""
    from harness.errors import HarnessError
    from harness.protocol import load_addendum, removed_since, run_deviations

    try:
        copy, now = load_addendum(copies[0]), load_addendum(current)
    except (HarnessError, IndexError):
        return  # an unreadable copy is found above by its hash; the study's is not the run's
    for entry in removed_since(copy, now):
        found.append(
            (
                str(current),
                f"lost the {entry.kind} of {entry.when} ({entry.text[:60]!r}) that the run's "
                "copy holds: an addendum only grows",
            )
        )
    later = run_deviations(copy, now, header.mode, header.started)
    for deviation in later:
        if "backdated" in deviation.why:
            notes.append(
                f"{deviation.entry.kind} of {deviation.entry.when} ({deviation.entry.text[:60]!r})"
                f" is {deviation.why}: the report lists it as this run's deviation"
            )
