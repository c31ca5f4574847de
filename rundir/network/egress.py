"""`egress.jsonl`: every refused connection of a run, one `EgressEntry` per attempt, in time order.

Appended by the harness as it reads its sources while the run goes on
(harness/isolation/egress_book.py: the arms' guard logs, the proxy's and the DNS refuser's
refusals, the kernel log followed from the run's start), never rewritten: a line once written
stays. Repeated attempts at one destination read in one look are one line with `count` (absent:
1) from `time` to `last_time`; the first attempt at each destination is always a line of its own.
Which fields an entry has depends on its source; every entry names an arm, a destination, a time and
the source.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import Field, ValidationError

from rundir.atomic import write_atomic
from rundir.errors import RunDirError
from rundir.jsonlines import read_lines
from rundir.model import RunDirModel

M = TypeVar("M", bound=RunDirModel)

EGRESS_SCHEMA: Literal[1] = 1

EgressSource = Literal["guard", "proxy", "dns", "kernel"]


class EgressEntry(RunDirModel):
    schema_: Literal[1] = Field(EGRESS_SCHEMA, alias="schema")
    arm: str  # whose attempt: from where it was seen (folder, listener, network), never its word
    # --workers N: the worker whose copy of the arm it was (rundir/instances.py; absent: 0)
    worker: int | None = Field(None, ge=1)
    destination: str  # host:port, a DNS name, or "?"
    time: str  # ISO 8601 in real time (a guard's own pinned-clock time is kept in arm_time)
    source: EgressSource
    line: int | None = None  # guard: the line of the arm's log
    pid: int | str | None = None  # guard: as the arm wrote it
    kind: int | str | None = None  # guard: "connect" or "raw_socket", as the arm wrote it
    arm_time: str | None = None  # guard: the time the arm wrote, on its pinned clock
    query_type: str | None = None  # dns
    protocol: str | None = None  # kernel
    interface: str | None = None  # kernel: the bridge the packet arrived on
    # guard: the arm or source a forged line claimed; kernel: the packet's source address.
    claimed_arm: str | None = None
    claimed_source: str | None = None
    flags: list[str] | None = None  # guard: "forged", "unreadable"
    raw: str | None = None  # an unreadable line, cut short
    count: int | None = Field(None, ge=1)  # attempts this line stands for (absent: 1)
    last_time: str | None = None  # with count: the last of them

    def as_dict(self) -> dict[str, Any]:
        """The entry as its JSON object: only the fields its source has."""
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")


def write_egress(path: Path, entries: Sequence[RunDirModel]) -> None:
    """Write an egress log (the arms' or the proxy's own) atomically, one entry a line."""
    write_atomic(
        path, "".join(e.model_dump_json(by_alias=True, exclude_none=True) + "\n" for e in entries)
    )


def read_egress(path: Path) -> list[EgressEntry]:
    """Every entry of a run's egress.jsonl (none when the file is missing), validated."""
    return read_entries(path, EgressEntry, "an egress entry")


def read_entries(path: Path, model: type[M], what: str) -> list[M]:
    """Every line of an egress log as `model` (none when the file is missing); a damaged line is
    a one-line RunDirError naming the file, the line and `what` it should have been."""
    if not path.exists():
        return []
    entries = []
    for number, line in enumerate(read_lines(path), 1):
        if not line.strip():
            continue
        try:
            entries.append(model.model_validate_json(line))
        except ValidationError as e:
            raise RunDirError(
                f"{path}:{number}: not {what}: {e.errors()[0]['msg']}",
                hint="run `harness audit` on the run to see what is damaged",
            ) from None
    return entries
