"""Ingestion and snapshot lines of `turns.jsonl` (seam v2 memory benchmarks).

turns.jsonl holds what each arm was given and did, in order. An answer's turn is a `TurnRecord`
(rundir/turns/turns.py); an arm's memory taking in one history session is an `IngestionRecord`
(`"kind": "ingestion"`), and the copy of its store taken once the history was in is a
`SnapshotRecord` (`"kind": "snapshot"`). `read_turns` reads answers only, so a report never counts
an ingestion as an answer; `read_ingestions` reads the other two.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import Field

from rundir.jsonlines import read_lines
from rundir.model import RunDirModel

INGESTION_SCHEMA: Literal[1] = 1
KINDS = ("ingestion", "snapshot")

# done: the arm took the session in. cut: its ingest deadline passed. error: it refused or failed
# (501: it does not ingest). infra_failed: the machinery failed (the arm died). resource_limit:
# the arm met one of its bounds (rundir/runs/limits.py) while ingesting it; the rest is not
# ingested.
IngestOutcome = Literal["done", "cut", "error", "infra_failed", "resource_limit"]


class IngestionRecord(RunDirModel):
    schema_: Literal[1] = Field(INGESTION_SCHEMA, alias="schema")
    kind: Literal["ingestion"] = "ingestion"
    run: str
    item: str  # the question whose history this is: the item its calls are charged to
    arm: str
    history: str  # the History's id: ingested once per arm when a snapshot is kept
    session: str  # the history session's own id (the dataset's)
    index: int = Field(ge=0)  # its place in the history: the `turn` of its calls
    date: datetime  # the clock the arm had meanwhile
    messages: int = Field(ge=0)
    outcome: IngestOutcome
    stored: int | None = None  # memories the arm says it kept
    seconds: float | None = None  # wall time at the seam
    attempts: int = 1
    error: str | None = None


class SnapshotRecord(RunDirModel):
    schema_: Literal[1] = Field(INGESTION_SCHEMA, alias="schema")
    kind: Literal["snapshot"] = "snapshot"
    run: str
    item: str
    arm: str
    history: str
    sha256: str  # over every file's relative path and bytes (harness/run/memory/snapshot.py)
    files: int
    bytes: int
    seconds: float  # stopping the arm and copying its folder
    path: str  # relative to the run directory


def kind_of(line: str) -> str | None:
    """The line's `kind` when it is an ingestion or snapshot line, else None (an answer)."""
    if '"kind"' not in line:
        return None
    kind = json.loads(line).get("kind")
    return kind if kind in KINDS else None


def read_ingestions(path: Path) -> list[IngestionRecord | SnapshotRecord]:
    if not path.exists():
        return []
    records: list[IngestionRecord | SnapshotRecord] = []
    for line in read_lines(path):
        kind = kind_of(line) if line.strip() else None
        if kind == "ingestion":
            records.append(IngestionRecord.model_validate_json(line))
        elif kind == "snapshot":
            records.append(SnapshotRecord.model_validate_json(line))
    return records
