"""`voids.jsonl`: items a harness defect found after the run made worthless, set aside in every arm.

`harness void RUN_DIR --items ID... --reason TEXT` appends one dated record (fsynced: the record
of a decision about the data must survive a crash). The report lists each voided item with its
reason and leaves its turns and judgments out of every statistic; the items' rerun after the fix
(a later run directory given to the same report) takes their place, and the report shows each
arm's outcome before and after. The file is written after the run ended, so it is not in the
run's manifest (rundir/manifest.py NOT_LISTED); `harness audit` checks that it parses.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Literal

from pydantic import Field

from rundir.atomic import fsync_dir
from rundir.jsonlines import read_lines
from rundir.model import RunDirModel

VOIDS_FILE = "voids.jsonl"
VOID_SCHEMA: Literal[1] = 1


class VoidRecord(RunDirModel):
    schema_: Literal[1] = Field(VOID_SCHEMA, alias="schema")
    run_id: str
    voided: str  # when it was recorded (ISO 8601, UTC)
    items: list[str] = Field(min_length=1)
    reason: str = Field(min_length=1)


def append_void(run_dir: Path, record: VoidRecord) -> None:
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
