"""`voids.jsonl`: items a harness defect found after the run made worthless, set aside in every arm.

`harness void RUN_DIR --items ID... --reason TEXT` appends one dated record (fsynced: the record
of a decision about the data must survive a crash). The report lists each voided item with its
reason and leaves its turns and judgments out of every statistic; the items' rerun after the fix
(a later run directory given to the same report) takes their place, and the report shows each
arm's outcome before and after. The file is written after the run ended, so it is not in the
run's manifest's file list (rundir/runs/manifest.py NOT_LISTED); instead its records form a hash
chain anchored in the run: the first record's `prev` is the SHA-256 of the run's sealed manifest,
each next one's the SHA-256 of the line before, and the manifest keeps the count and the last line's
hash (`voids`, `voids_head`). `harness audit` (`void_problems`) so catches a record forged or
copied from another run, one voiding an item that never ran, a line cut, and a deleted file.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError

from rundir.atomic import fsync_dir
from rundir.jsonlines import read_lines
from rundir.model import RunDirModel
from rundir.runs.manifest import Manifest

VOIDS_FILE = "voids.jsonl"
VOID_SCHEMA: Literal[1] = 1


class VoidRecord(RunDirModel):
    schema_: Literal[1] = Field(VOID_SCHEMA, alias="schema")
    run_id: str
    voided: str  # when it was recorded (ISO 8601, UTC)
    items: list[str] = Field(min_length=1)
    reason: str = Field(min_length=1)
    # The chain: the manifest's anchor for the first record, else the previous line's SHA-256
    # (None only in records written before voids were chained).
    prev: str | None = None


def anchor(manifest: Manifest) -> str:
    """The SHA-256 of the run's sealed manifest (its voids fields left out): the chain's start."""
    sealed = manifest.model_dump_json(by_alias=True, exclude={"voids", "voids_head"})
    return hashlib.sha256(sealed.encode()).hexdigest()


def _line_sha(line: bytes) -> str:
    return hashlib.sha256(line.rstrip(b"\n")).hexdigest()


def _lines(run_dir: Path) -> list[bytes]:
    path = run_dir / VOIDS_FILE
    if not path.exists():
        return []
    return [line for line in path.read_bytes().splitlines() if line.strip()]


def chain_next(run_dir: Path, manifest: Manifest) -> str:
    """The `prev` of the next record: the last line's SHA-256, or the anchor for the first."""
    lines = _lines(run_dir)
    return _line_sha(lines[-1]) if lines else anchor(manifest)


def append_void(run_dir: Path, record: VoidRecord) -> str:
    """Append `record` durably; the SHA-256 of its line (the chain's new head)."""
    line = record.model_dump_json(by_alias=True) + "\n"
    new = not (run_dir / VOIDS_FILE).exists()
    fd = os.open(run_dir / VOIDS_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)
    if new:
        fsync_dir(run_dir)  # the new file's name is durable too
    return _line_sha(line.encode("utf-8"))


def read_voids(run_dir: Path) -> list[VoidRecord]:
    path = run_dir / VOIDS_FILE
    if not path.exists():
        return []
    return [
        VoidRecord.model_validate(json.loads(line)) for line in read_lines(path) if line.strip()
    ]


def voided_items(run_dir: Path) -> dict[str, str]:
    """Each voided item and its reason (reasons of several records joined)."""
    out: dict[str, str] = {}
    for record in read_voids(run_dir):
        for item in record.items:
            out[item] = f"{out[item]}; {record.reason}" if item in out else record.reason
    return out


def void_problems(
    run_dir: Path, run_id: str, manifest: Manifest | None, ran: set[str]
) -> list[str]:
    """What is wrong with the run's voids: unparsable, another run's, an item that never ran, a
    broken chain, or a file that does not end where the manifest says (cut, or deleted)."""
    lines = _lines(run_dir)
    records: list[VoidRecord] = []
    for n, line in enumerate(lines, 1):
        try:
            records.append(VoidRecord.model_validate(json.loads(line)))
        except (ValueError, ValidationError) as e:
            return [f"does not parse at line {n}: {str(e).splitlines()[0]}"]
    problems: list[str] = []
    for n, record in enumerate(records, 1):
        if record.run_id != run_id:
            problems.append(f"line {n} voids items of run {record.run_id}, not of this run")
        never = [item for item in record.items if item not in ran]
        if never:
            problems.append(f"line {n} voids item(s) that never ran here: {', '.join(never)}")
    recorded = manifest.voids if manifest is not None else 0
    if manifest is None or (not recorded and all(r.prev is None for r in records)):
        return problems  # a run never sealed, or voids written before they were chained
    expected = anchor(manifest)
    for n, (line, record) in enumerate(zip(lines, records, strict=True), 1):
        if record.prev != expected:
            after = "the run's manifest" if n == 1 else f"line {n - 1}"
            problems.append(f"line {n} does not follow {after} (forged, or another run's)")
        expected = _line_sha(line)
    if recorded != len(lines):
        what = "is missing" if not lines else f"holds {len(lines)}"
        problems.append(f"run.json's manifest records {recorded} void record(s); the file {what}")
    elif manifest.voids_head != _line_sha(lines[-1]):
        problems.append("its last record is not the one run.json's manifest records")
    return problems
