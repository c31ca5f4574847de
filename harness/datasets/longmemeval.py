"""LongMemEval (`longmemeval_s.json`, `_m`, `_oracle`): a JSON list of questions, each with its
own history (xiaowu0162/LongMemEval's README, "Dataset Format").

Each entry: `question_id` (ending `_abs` for an abstention question), `question_type`,
`question`, `answer` (a string, sometimes a number), `question_date`, and the history as three
parallel lists, `haystack_session_ids`, `haystack_dates` and `haystack_sessions` (each a list of
`{"role", "content", "has_answer"?}` turns), plus `answer_session_ids` (the evidence sessions).
The oracle file's sessions are not sorted by date; ingestion is in date order, so they are
sorted here (stably: the file's order breaks ties).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import PrivateAttr

from harness.datasets.dates import longmemeval_date
from harness.datasets.draw import Drawn, draw_indices
from harness.datasets.index import IndexEntry, longmemeval_index, read_entries
from harness.datasets.model import (
    DatasetError,
    History,
    HistoryMessage,
    HistorySession,
    Memory,
    Question,
)
from harness.datasets.shapes import need, need_list, need_str, read_json

QUESTION_TYPES = frozenset(
    {
        "single-session-user",
        "single-session-assistant",
        "single-session-preference",
        "temporal-reasoning",
        "knowledge-update",
        "multi-session",
    }
)


def load(path: Path) -> list[Memory]:
    data = read_json(path)
    if not isinstance(data, list):
        raise DatasetError(f"{path}: not LongMemEval: the file is not a JSON list of questions")
    memories = [_entry(entry, f"{path}: [{n}]") for n, entry in enumerate(data)]
    seen: set[str] = set()
    for n, memory in enumerate(memories):
        qid = memory.question.question_id
        if qid in seen:
            raise DatasetError(f"{path}: [{n}].question_id: {qid!r} appears twice")
        seen.add(qid)
    return memories


def load_drawn(
    path: Path,
    n: int | None,
    seed: int,
    stratify: str | None,
    per_conversation_max: int | None,
) -> Drawn:
    """The drawn questions only, read lazily (harness/datasets/index.py): the same draw as
    `draw(load(path), ...)` on the file's index, then only the drawn questions decoded and
    checked in full (every question's id and type are checked by the index)."""
    index = longmemeval_index(path)
    seen: set[str] = set()
    for n_, entry in enumerate(index):
        if entry.question_id in seen:
            raise DatasetError(f"{path}: [{n_}].question_id: {entry.question_id!r} appears twice")
        seen.add(entry.question_id)
        if entry.question_type not in QUESTION_TYPES:
            raise DatasetError(
                f"{path}: [{n_}].question_type: {entry.question_type!r} is not one of "
                f"{', '.join(sorted(QUESTION_TYPES))}"
            )
    strata = [e.question_type if stratify == "question_type" else "all" for e in index]
    histories = [f"h.{_safe(e.question_id)}" for e in index]
    picked, available, taken = draw_indices(strata, histories, n, seed, per_conversation_max)
    stamp = _stamp(path)
    memories = []
    for i in picked:  # one question decoded at a time, checked in full, then held without text
        [value] = read_entries(path, [index[i]])
        memory = _entry(value, f"{path}: [{i}]")
        memory.history = StoredHistory.of(memory.history, path, index[i], i, stamp)
        memories.append(memory)
    return Drawn(memories, available, taken)


class StoredHistory(History):
    """A drawn question's history held as its sessions' ids and dates (their messages empty):
    500 LongMemEval-S histories are ~265 MB of text, several times that as objects. `full()`
    reads the question again from its offsets when its item's turn comes (harness/run/
    memory_stage.py), so a run holds one history's messages per worker."""

    _path: Path = PrivateAttr()
    _entry: IndexEntry = PrivateAttr()
    _position: int = PrivateAttr()
    _stamp: tuple[int, int] = PrivateAttr()

    @classmethod
    def of(
        cls, history: History, path: Path, entry: IndexEntry, position: int, stamp: tuple[int, int]
    ) -> StoredHistory:
        held = cls.model_construct(
            id=history.id,
            sessions=[
                HistorySession.model_construct(session_id=s.session_id, date=s.date, messages=[])
                for s in history.sessions
            ],
        )
        held._path, held._entry, held._position, held._stamp = path, entry, position, stamp
        return held

    def full(self) -> History:
        if _stamp(self._path) != self._stamp:
            raise DatasetError(
                f"{self._path}: changed since the study was loaded; run the study again"
            )
        [value] = read_entries(self._path, [self._entry])
        return _entry(value, f"{self._path}: [{self._position}]").history


def _stamp(path: Path) -> tuple[int, int]:
    try:
        info = path.stat()
    except OSError as e:
        raise DatasetError(f"cannot read {path}: {e}") from None
    return info.st_size, info.st_mtime_ns


def _entry(entry: Any, where: str) -> Memory:
    if not isinstance(entry, dict):
        raise DatasetError(f"{where}: not a JSON object")
    qid = need_str(entry, "question_id", where)
    qtype = need_str(entry, "question_type", where)
    if qtype not in QUESTION_TYPES:
        raise DatasetError(
            f"{where}.question_type: {qtype!r} is not one of {', '.join(sorted(QUESTION_TYPES))}"
        )
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
    history: list[HistorySession] = []
    evidence_texts: list[str] = []
    for n, (sid, date, turns) in enumerate(zip(ids, dates, sessions, strict=True)):
        if not isinstance(sid, str) or not sid:
            raise DatasetError(f"{where}.haystack_session_ids[{n}]: not a non-empty string")
        if not isinstance(date, str):
            raise DatasetError(f"{where}.haystack_dates[{n}]: not a string")
        when = _date(date, f"{where}.haystack_dates[{n}]")
        if not isinstance(turns, list):
            raise DatasetError(f"{where}.haystack_sessions[{n}]: not a list of turns")
        messages = []
        for t, turn in enumerate(turns):
            at = f"{where}.haystack_sessions[{n}][{t}]"
            if not isinstance(turn, dict):
                raise DatasetError(f"{at}: not a JSON object")
            role = need_str(turn, "role", at)
            if role not in ("user", "assistant"):
                raise DatasetError(f"{at}.role: {role!r} is not user or assistant")
            content = need_str(turn, "content", at)
            if turn.get("has_answer") is True:
                evidence_texts.append(content)
            messages.append(HistoryMessage(role=role, content=content))
        history.append(HistorySession(session_id=sid, date=when, messages=messages))
    history.sort(key=lambda s: s.date)
    return Memory(
        source="longmemeval",
        history=History(id=f"h.{_safe(qid)}", sessions=history),
        question=Question(
            question_id=qid,
            question=question,
            answer=str(answer),
            question_date=asked,
            question_type=qtype,
            abstention=qid.endswith("_abs"),
            evidence_sessions=[str(s) for s in evidence_ids],
            evidence_texts=evidence_texts,
        ),
    )


def _date(text: str, where: str) -> Any:
    try:
        return longmemeval_date(text)
    except ValueError as e:
        raise DatasetError(f"{where}: {e}") from None


def _safe(text: str) -> str:
    return "".join(c if (c.isascii() and c.isalnum()) or c in "._:-" else "_" for c in text)


def dump_entry(memory: Memory) -> dict[str, Any]:
    """A memory as a LongMemEval entry (the fixtures' and the scale bench's writer)."""
    q = memory.question
    return {
        "question_id": q.question_id,
        "question_type": q.question_type,
        "question": q.question,
        "answer": q.answer,
        "question_date": q.question_date.strftime("%Y/%m/%d (%a) %H:%M"),
        "haystack_session_ids": [s.session_id for s in memory.history.sessions],
        "haystack_dates": [s.date.strftime("%Y/%m/%d (%a) %H:%M") for s in memory.history.sessions],
        "haystack_sessions": [
            [
                {"role": m.role, "content": m.content}
                | ({"has_answer": True} if m.content in q.evidence_texts else {})
                for m in s.messages
            ]
            for s in memory.history.sessions
        ],
        "answer_session_ids": q.evidence_sessions,
    }


def dumps(memories: list[Memory]) -> str:
    return json.dumps([dump_entry(m) for m in memories], indent=1)
