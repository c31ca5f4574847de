"""The audit's re-check of a coupled study's turn context (issue 25 item 2), from turns.jsonl alone.

A source arm's turn returns a context (`addon_returned`, hashed as `addon_returned_sha256`); the
arms after it in the same turn receive it (`addon_from` names the source, `addon_sha256` hashes
what they got; harness/run/coupled_item.py). A record whose returned text does not hash to its
recorded hash, or a receiver whose hash is not its source's returned hash for the same item and
turn, was changed after the run (or the run handed the wrong text): each is a discrepancy naming
the line, the arm, the item and the turn.

A receiver is matched with the latest record of its source for the same item and turn written
before it (records are written turn by turn, the source's before its receivers'; a resumed item
appends its records again, each run of the item self-contained).

Then the prompt audit (audit/prompt.py, the design's V2): each receiver's first main request of
the turn holds the handed text as a system prompt, once, and in no user message.
"""

from __future__ import annotations

from pathlib import Path

from harness.checks.audit.prompt import prompt_findings
from rundir.turns import TurnRecord, addon_sha256, read_turns


def _name(line: int, record: TurnRecord) -> str:
    return f"turns.jsonl:{line} ({record.arm}, {record.item}, turn {record.turn})"


def _returned(line: int, record: TurnRecord) -> list[tuple[str, str]]:
    """The returned text and its hash agree (both present, or both absent)."""
    where = _name(line, record)
    text, digest = record.addon_returned, record.addon_returned_sha256
    if text is None and digest is None:
        return []
    if text is None or digest is None:
        missing = "addon_returned" if text is None else "addon_returned_sha256"
        return [(where, f"{missing} is missing while the other is recorded")]
    if addon_sha256(text) != digest:
        return [(where, f"addon_returned does not hash to addon_returned_sha256 ({digest[:12]}…)")]
    return []


def _received(line: int, record: TurnRecord, source: TurnRecord | None) -> list[tuple[str, str]]:
    """A receiver's hash is its source's returned hash of the same item and turn."""
    where = _name(line, record)
    if record.addon_from is None:
        if record.addon_sha256 is not None:
            return [(where, "addon_sha256 recorded without addon_from (no source named)")]
        return []
    if record.addon_sha256 is None:
        return [(where, f"received a turn context from {record.addon_from} but no addon_sha256")]
    if record.addon_from == record.arm:
        return [(where, "names itself as its turn context's source")]
    if source is None:
        return [
            (where, f"its source {record.addon_from} has no record of this item and turn before it")
        ]
    if source.outcome != "done" or source.addon_returned_sha256 is None:
        return [
            (
                where,
                f"its source {record.addon_from}'s turn ({source.outcome}) returned no turn "
                "context to hand",
            )
        ]
    if record.order is not None and (
        record.addon_from not in record.order
        or record.arm not in record.order
        or record.order.index(record.addon_from) > record.order.index(record.arm)
    ):
        return [(where, f"its source {record.addon_from} did not run before it in {record.order}")]
    if source.addon_returned_sha256 != record.addon_sha256:
        return [
            (
                where,
                f"addon_sha256 {record.addon_sha256[:12]}… is not its source "
                f"{record.addon_from}'s addon_returned_sha256 "
                f"{source.addon_returned_sha256[:12]}…",
            )
        ]
    return []


def turn_context_findings(run_dir: Path) -> list[tuple[str, str]]:
    """(where, detail) for every turn context that does not hold in the run's turns.jsonl."""
    path = run_dir / "turns.jsonl"
    if not path.exists():
        return []
    found: list[tuple[str, str]] = []
    latest: dict[tuple[str, str, int], TurnRecord] = {}  # (arm, item, turn) -> last seen
    handed: list[tuple[int, TurnRecord, str]] = []  # receivers whose handed text is known
    for line, record in enumerate(read_turns(path), start=1):
        found += _returned(line, record)
        if record.addon_from is not None or record.addon_sha256 is not None:
            source = latest.get((record.addon_from or "", record.item, record.turn))
            problems = _received(line, record, source)
            found += problems
            text = source.addon_returned if source is not None else None
            if not problems and text and addon_sha256(text) == record.addon_sha256:
                handed.append((line, record, text))  # the text the receiver was handed
        latest[(record.arm, record.item, record.turn)] = record
    # V2: the handed text where the design puts it, in each receiver's captured request.
    return found + prompt_findings(run_dir, handed)
