"""A coupled study's memory question (harness/run/coupled_item.py): what its turn records are
when the arm's history could not be taken in, and when another arm's snapshot failed.

The uncoupled path says the same in harness/run/item_on_arm.py (`ItemOnArm._not_asked`) and
harness/run/orchestrator.py (`_settle`); a coupled item keeps its records per arm and turn until
the item is over, so it asks here.
"""

from __future__ import annotations

from harness.run.memory import Prepared
from harness.run.turns import AttemptRecords
from rundir.turns import TurnRecord


def unasked(prepared: Prepared, records: AttemptRecords, turns: int) -> list[TurnRecord] | None:
    """The records of a question that is not asked once the arm's history was prepared (none
    on Ctrl-C: the question is left for --resume), or None when it may be asked."""
    if prepared.stopped:
        return []
    if prepared.limited:  # a bound met while ingesting: the arm is replaced after the item
        why = f"not run: {prepared.limited} while ingesting the history"
        return [records.failed(n, "resource_limit", why) for n in range(turns)]
    if prepared.failed:  # a v1 arm, or one that cannot take this history
        return [records.failed(n, "error", prepared.failed) for n in range(turns)]
    return None


def voided(
    kept: dict[int, TurnRecord], records: AttemptRecords, turns: int, spoiled: str | None
) -> list[TurnRecord]:
    """An arm's records of the question, turn by turn: every turn an infrastructure failure
    naming the arm whose snapshot failed when one did (the arms would not have read the same
    stores), whatever this arm answered, the failing arm's own included."""
    if spoiled is None:
        return [kept[n] for n in sorted(kept)]
    return records.given_up([], turns, spoiled)
