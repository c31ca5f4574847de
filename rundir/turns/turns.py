"""`turns.jsonl`: one `TurnRecord` per scripted turn per arm, append-only."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field

from rundir.jsonlines import JsonLinesAppender, read_lines
from rundir.model import Upgradable, Upgrade

TURN_SCHEMA: Literal[1] = 1


def addon_sha256(text: str) -> str:
    """How a turn context is hashed in `addon_sha256` and `addon_returned_sha256` (its UTF-8)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# done: the arm finished in time. cut: the deadline passed; `text` is what arrived before it.
# error: the arm reported an error or broke the seam protocol (the arm's failure, an outcome).
# infra_failed: the machinery failed on every attempt (process died, seam refused): not the arm's.
# stray_connection: a refused connection halted the run during this turn (on_stray = "halt").
# resource_limit: the arm met one of its bounds (rundir/runs/limits.py) in this turn, or in an
# earlier turn of the same item (the rest are not run); `error` names the arm and the bound. The
# arm's failure, like cut and error.
# wrong_model: a main call of this turn was served by a model other than the study's pin for
# its purpose (`[pins.models]`; harness/run/watch/model_identity.py); `error` names the call. The
# arm's failure, like cut and error.
TurnOutcome = Literal[
    "done", "cut", "error", "infra_failed", "stray_connection", "resource_limit", "wrong_model"
]


def _from_schema_0(record: dict[str, Any]) -> dict[str, Any]:
    # Schema 0 named the run `run_id`, as calls.jsonl does. No release wrote it: it is the
    # upgrade hook's first real step, which keeps the path from old lines to models exercised.
    if "run_id" in record:
        record["run"] = record.pop("run_id")
    return record


class TurnRecord(Upgradable):
    upgrades: ClassVar[dict[int, Upgrade]] = {0: _from_schema_0}

    schema_: Literal[1] = Field(TURN_SCHEMA, alias="schema")
    run: str
    item: str
    arm: str
    turn: int
    text: str
    outcome: TurnOutcome
    first_token_s: float | None = None
    last_token_s: float | None = None
    # 1 + the number of infrastructure retries of this item on this arm before this record.
    attempts: int = 1
    error: str | None = None
    # Connections the arm attempted during this turn that were refused (details: egress.jsonl).
    stray_connections: int = 0
    # The turn's memory control (harness/checks/memory_controls.py): None when it has none, [] when
    # the arm surfaced everything, else the expected words (and /pattern/) it did not.
    memory_miss: list[str] | None = None
    # A coupled study's order (harness/run/coupled_item.py; docs/coupled.md): the arms in the order
    # they ran each turn of this item (every arm's turn t before any arm's turn t+1); else None.
    order: list[str] | None = None
    # The arm whose turn context this turn received (an earlier arm of the same turn), else None.
    addon_from: str | None = None
    addon_sha256: str | None = None  # SHA-256 of the turn context received (UTF-8)
    # The turn context this turn returned with its final seam message (a source arm's `addon`).
    addon_returned: str | None = None
    addon_returned_sha256: str | None = None  # its SHA-256 (UTF-8)
    # The study's output guard on this turn's text (harness/guard.py): pass | fail | error (it
    # could not say), and its reason; None when the study has no guard or the turn no text.
    guard: Literal["pass", "fail", "error"] | None = None
    guard_reason: str | None = None


class TurnLog(JsonLinesAppender):
    """turns.jsonl, made when the run starts (an empty one says no turn finished)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, create=True)


def read_turns(path: Path) -> list[TurnRecord]:
    """The answers' turns; ingestion and snapshot lines (rundir/turns/ingestions.py) are not
    turns."""
    from rundir.turns.ingestions import kind_of

    if not path.exists():
        return []
    return [
        TurnRecord.model_validate(json.loads(line))
        for line in read_lines(path)
        if line.strip() and kind_of(line) is None
    ]
