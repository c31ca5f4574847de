"""`records.jsonl`: the raw per-turn and per-call rows every aggregate of the report is computed
from, so a reader can recompute any figure without the run directory.

One `{"kind": "turn"}` line per (arm, item, turn) and one `{"kind": "call"}` line per call, in
the run's order; a memory benchmark adds one `{"kind": "question"}` line per question and arm
(questions.jsonl: type or category, gold, abstention, exact match, NET(lambda), evidence,
ingestion and answer cost apart). Money stays an exact decimal string. A public copy names items
by ordinal and leaves the turn text out (its length stays), because texts quote the study's
private materials.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

from harness.report.figures import dropped_items, response_size, turn_costs
from harness.report.public import Anonymizer
from harness.report.reading import RunData
from rundir.turns import read_questions


def records(data: RunData, anon: Anonymizer) -> list[dict[str, Any]]:
    dropped = dropped_items(data.turns)
    costs = turn_costs(data.calls)
    # The response bytes of each turn's calls whose size the run's files give.
    turn_bytes: dict[tuple[str, str | None, int | None], int] = {}
    for c in data.calls:
        size = response_size(c, data.response_bytes)
        if size is not None:
            key = (c.arm, c.item, c.turn)
            turn_bytes[key] = turn_bytes.get(key, 0) + size
    rows: list[dict[str, Any]] = []
    for t in data.turns:
        row: dict[str, Any] = {
            "kind": "turn",
            "run": anon.run(t.run),
            "arm": t.arm,
            "item": anon.item(t.item),
            "turn": t.turn,
            "outcome": t.outcome,
            "dropped": t.item in dropped,
            "first_token_s": t.first_token_s,
            "last_token_s": t.last_token_s,
            "attempts": t.attempts,
            "cost_usd": str(costs.get((t.arm, t.item, t.turn), Decimal(0))),
            "response_bytes": turn_bytes.get((t.arm, t.item, t.turn), 0),
            "text_chars": len(t.text),
            "stray_connections": t.stray_connections,
        }
        if not anon.public:
            row["text"] = t.text
        rows.append(row)
    for c in data.calls:
        rows.append(
            {
                "kind": "call",
                "run": anon.run(c.run_id),
                "seq": c.seq,
                "arm": c.arm,
                "item": anon.item(c.item) if c.item is not None else None,
                "turn": c.turn,
                "dropped": c.item in dropped,
                "purpose": c.purpose,
                "route": c.route,
                "model": c.model_served or c.model_requested,
                "outcome": c.outcome,
                "tokens": c.tokens.model_dump(),
                "cost_usd": str(c.cost_usd),
                "reserved_usd": str(c.reserved_usd),
                "response_bytes": response_size(c, data.response_bytes),
                "seconds": (c.timing.end - c.timing.start) if c.timing.end else None,
                "flags": c.flags,
            }
        )
    rows += question_rows(data, anon)
    return rows


def question_rows(data: RunData, anon: Anonymizer) -> list[dict[str, Any]]:
    """A memory benchmark's questions; a public copy keeps no question text, gold or answer."""
    rows: list[dict[str, Any]] = []
    for run_dir in data.run_dirs:
        for q in read_questions(run_dir / "questions.jsonl"):
            row = q.model_dump(mode="json", exclude={"schema_"})
            row |= {"kind": "question", "run": anon.run(q.run), "item": anon.item(q.item)}
            if anon.public:
                for private in ("question_id", "gold", "answer", "history", "evidence_sessions"):
                    row.pop(private, None)
                row["answer_chars"] = len(q.answer)
            rows.append(row)
    return rows


def write_records(path: Path, rows: list[dict[str, Any]]) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, sort_keys=True) + "\n")
