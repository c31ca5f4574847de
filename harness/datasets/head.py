"""A LongMemEval question's head: everything a study's plan needs of it without its history's
text (the question, its gold answer and date, its sessions' ids and dates, its evidence).

The lazy index (harness/datasets/index.py) keeps each question's head, so loading a study reads
no question at all: a run, or a shard of one, reads and checks in full only the questions it
runs, each when its item's turn comes (harness/datasets/longmemeval.py's StoredHistory). The
head's fields are checked when the index is built; a question whose head is bad keeps the
problem in the index instead, so a draw that does not take it is not refused for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from harness.datasets.dates import longmemeval_date
from harness.datasets.model import DatasetError
from harness.datasets.shapes import need, need_list, need_str


@dataclass(frozen=True)
class Head:
    question: str
    answer: str  # a string, as the harness compares it (the file has numbers too)
    question_date: datetime
    sessions: list[tuple[str, datetime]]  # (id, date) in the file's order
    evidence_sessions: list[str]
    # The has_answer turns' text: what must reach the arm's main call
    # (harness/run/memory/question_records.py).
    evidence_texts: list[str]

    def row(self) -> list[Any]:
        """The head as the index's cache writes it (JSON)."""
        return [
            self.question,
            self.answer,
            self.question_date.isoformat(),
            [[sid, when.isoformat()] for sid, when in self.sessions],
            self.evidence_sessions,
            self.evidence_texts,
        ]

    @classmethod
    def of_row(cls, row: list[Any]) -> Head:
        question, answer, asked, sessions, evidence, texts = row
        return cls(
            question,
            answer,
            datetime.fromisoformat(asked),
            [(sid, datetime.fromisoformat(when)) for sid, when in sessions],
            evidence,
            texts,
        )


def read_head(entry: dict[str, Any], where: str) -> Head:
    """The head's fields, checked; DatasetError names the first bad one. The turns themselves
    are checked with the whole question (longmemeval.py), only when it is read to run."""
    question = need_str(entry, "question", where)
    answer = need(entry, "answer", where)
    if not isinstance(answer, str | int | float) or isinstance(answer, bool):
        raise DatasetError(f"{where}.answer: a string or a number, not {type(answer).__name__}")
    asked = _date(need_str(entry, "question_date", where), f"{where}.question_date")
    ids = need_list(entry, "haystack_session_ids", where)
    dates = need_list(entry, "haystack_dates", where)
    sessions = need_list(entry, "haystack_sessions", where)
    if not (len(ids) == len(dates) == len(sessions)) or not ids:
        raise DatasetError(
            f"{where}.haystack_sessions: {len(sessions)} sessions, {len(ids)} ids and "
            f"{len(dates)} dates; the three lists must be as long as each other, and not empty"
        )
    evidence_ids = need_list(entry, "answer_session_ids", where)
    held: list[tuple[str, datetime]] = []
    for n, (sid, date) in enumerate(zip(ids, dates, strict=True)):
        if not isinstance(sid, str) or not sid:
            raise DatasetError(f"{where}.haystack_session_ids[{n}]: not a non-empty string")
        if not isinstance(date, str):
            raise DatasetError(f"{where}.haystack_dates[{n}]: not a string")
        held.append((sid, _date(date, f"{where}.haystack_dates[{n}]")))
    return Head(
        question=question,
        answer=str(answer),
        question_date=asked,
        sessions=held,
        evidence_sessions=[str(s) for s in evidence_ids],
        evidence_texts=[
            turn["content"]
            for turns in sessions
            if isinstance(turns, list)
            for turn in turns
            if isinstance(turn, dict)
            and turn.get("has_answer") is True
            and isinstance(turn.get("content"), str)
        ],
    )


def _date(text: str, where: str) -> datetime:
    try:
        return longmemeval_date(text)
    except ValueError as e:
        raise DatasetError(f"{where}: {e}") from None
