"""`strays_seen.jsonl`: when the orchestrator saw each refused connection, and what was running.

egress.jsonl names every refused attempt (arm, destination, source, time) but not the turn it
belongs to; the orchestrator looks at the egress sources while each turn runs and appends one
`StraySeen` per new entry here, so the report can say "item X turn 2" for each destination. An
entry of egress.jsonl with no line here was first seen by the run's final read, after every
arm stopped: its arm's teardown (harness/run/watch/strays.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import Field

from rundir.jsonlines import append_line, read_lines
from rundir.model import RunDirModel

STRAYS_SEEN_SCHEMA: Literal[1] = 1


class StraySeen(RunDirModel):
    schema_: Literal[1] = Field(STRAYS_SEEN_SCHEMA, alias="schema")
    run: str
    arm: str  # the arm the egress entry is charged to
    destination: str  # host:port, IP:port, or the name looked up (DNS)
    source: str  # guard, proxy, dns, kernel
    time: str  # the entry's own time
    during: Literal["start-up", "turn"]
    # The turn running when it was seen (during = "turn"); its arm may be another arm.
    running_arm: str | None = None
    item: str | None = None
    turn: int | None = None
    # The attempts the egress entry stands for (a burst folded into one line: its `count`).
    count: int = Field(1, ge=1)

    @classmethod
    def of(
        cls, run: str, entry: dict[str, object], running: tuple[str, str, int] | None
    ) -> StraySeen:
        """An egress entry, seen while `running` (arm, item, turn) ran, or at start-up (None)."""
        arm, item, turn = running or (None, None, None)
        count = entry.get("count")
        return cls(
            count=count if isinstance(count, int) and count > 0 else 1,
            run=run,
            arm=str(entry.get("arm")),
            destination=str(entry.get("destination")),
            source=str(entry.get("source")),
            time=str(entry.get("time")),
            during="start-up" if running is None else "turn",
            running_arm=arm,
            item=item,
            turn=turn,
        )


def append_seen(path: Path, seen: StraySeen) -> None:
    append_line(path, seen)


def read_seen(path: Path) -> list[StraySeen]:
    if not path.exists():
        return []
    return [StraySeen.model_validate(json.loads(line)) for line in read_lines(path) if line.strip()]
