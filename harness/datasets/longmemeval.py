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

from harness.datasets.draw import Drawn, draw_indices
from harness.datasets.head import Head, read_head
from harness.datasets.index import IndexEntry, longmemeval_index, read_entries
from harness.datasets.model import (
    DatasetError,
    History,
    HistoryMessage,
    HistorySession,
    Memory,
    Question,
)
from harness.datasets.shapes import need_str, read_json

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
    """The drawn questions, from the file's index alone (harness/datasets/index.py): the same
    draw as `draw(load(path), ...)`, each question built from its head (harness/datasets/
    head.py) with its history held without text. No question is read here: a run, or a shard
    of one, reads and checks in full only the questions it runs, when their turn comes."""
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
    for i in picked:
        entry = index[i]
        if entry.head is None:  # a drawn question whose head is bad refuses the study
            raise DatasetError(entry.problem or f"{path}: [{i}]: unreadable")
        held = StoredHistory.held(histories[i], entry.head, path, entry, i, stamp)
        memories.append(_memory(entry.question_id, entry.question_type, entry.head, held))
    return Drawn(memories, available, taken)


class StoredHistory(History):
    """A drawn question's history held as its sessions' ids and dates (their messages empty):
    500 LongMemEval-S histories are ~265 MB of text, several times that as objects. `full()`
    reads the question from its offsets and checks it in full when its item's turn comes
    (harness/run/memory/memory_stage.py), so a run holds one history's messages per worker, and
    reads only the questions it runs (a shard: its own)."""

    _path: Path = PrivateAttr()
    _entry: IndexEntry = PrivateAttr()
    _position: int = PrivateAttr()
    _stamp: tuple[int, int] = PrivateAttr()

    @classmethod
    def held(
        cls,
        history_id: str,
        head: Head,
        path: Path,
        entry: IndexEntry,
        position: int,
        stamp: tuple[int, int],
    ) -> StoredHistory:
        sessions = [
            HistorySession.model_construct(session_id=sid, date=when, messages=[])
            for sid, when in head.sessions
        ]
        sessions.sort(key=lambda s: s.date)  # as _entry sorts them (stably)
        held = cls.model_construct(id=history_id, sessions=sessions)
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
    """A question read in full: its head and every turn checked."""
    if not isinstance(entry, dict):
        raise DatasetError(f"{where}: not a JSON object")
    qid = need_str(entry, "question_id", where)
    qtype = need_str(entry, "question_type", where)
    if qtype not in QUESTION_TYPES:
        raise DatasetError(
            f"{where}.question_type: {qtype!r} is not one of {', '.join(sorted(QUESTION_TYPES))}"
        )
    head = read_head(entry, where)
    history: list[HistorySession] = []
    sessions = entry["haystack_sessions"]
    for n, ((sid, when), turns) in enumerate(zip(head.sessions, sessions, strict=True)):
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
            messages.append(HistoryMessage(role=role, content=content))
        history.append(HistorySession(session_id=sid, date=when, messages=messages))
    history.sort(key=lambda s: s.date)
    return _memory(qid, qtype, head, History(id=f"h.{_safe(qid)}", sessions=history))


def _memory(qid: str, qtype: str, head: Head, history: History) -> Memory:
    return Memory.model_construct(
        source="longmemeval",
        history=history,
        question=Question(
            question_id=qid,
            question=head.question,
            answer=head.answer,
            question_date=head.question_date,
            question_type=qtype,
            abstention=qid.endswith("_abs"),
            evidence_sessions=head.evidence_sessions,
            evidence_texts=head.evidence_texts,
        ),
    )


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
