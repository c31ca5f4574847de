"""LoCoMo (`locomo10.json`, snap-research/locomo): a JSON list of conversations, each with many
questions about it.

Each entry: `sample_id`; `conversation` with `speaker_a`, `speaker_b`, and for N = 1, 2, ...
`session_N` (a list of `{"speaker", "dia_id", "text"}` turns, some with `img_url` and
`blip_caption` for a shared photo) and `session_N_date_time` (`1:56 pm on 8 May, 2023`); `qa`, a
list of `{"question", "answer", "evidence": ["D1:3", ...], "category"}`, where category 5 is
adversarial: its gold is `adversarial_answer` and the right reply is that the conversation does
not say (kept as an abstention). Other keys (`event_summary`, `observation`, `session_summary`)
are the dataset's annotations, not the conversation, and are not ingested.

The conversation is one `History` shared by all its questions, so an arm ingests it once. LoCoMo
gives a question no date: it is asked at the last session's date. speaker_a's turns are given
the `user` role and speaker_b's `assistant`, each with its speaker's name.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from harness.datasets.dates import locomo_date
from harness.datasets.model import (
    DatasetError,
    History,
    HistoryMessage,
    HistorySession,
    Memory,
    Question,
)
from harness.datasets.shapes import need, need_list, need_str, read_json

ADVERSARIAL = 5
_SESSION = re.compile(r"session_(\d+)")
# Evidence ids as the file writes them: "D1:3"; a few published entries hold two in one string
# ("D8:6; D9:17"), so every id in the string counts.
_DIA = re.compile(r"D(\d+):(\d+)")


def load(path: Path) -> list[Memory]:
    data = read_json(path)
    if not isinstance(data, list):
        raise DatasetError(f"{path}: not LoCoMo: the file is not a JSON list of conversations")
    memories: list[Memory] = []
    seen: set[str] = set()
    for n, entry in enumerate(data):
        where = f"{path}: [{n}]"
        if not isinstance(entry, dict):
            raise DatasetError(f"{where}: not a JSON object")
        sample = need(entry, "sample_id", where)
        if not isinstance(sample, str | int) or isinstance(sample, bool) or str(sample) in seen:
            raise DatasetError(f"{where}.sample_id: not a string, or appears twice")
        seen.add(str(sample))
        memories += _conversation(str(sample), entry, where)
    return memories


def _conversation(sample: str, entry: dict[str, Any], where: str) -> list[Memory]:
    conversation = need(entry, "conversation", where)
    at = f"{where}.conversation"
    if not isinstance(conversation, dict):
        raise DatasetError(f"{at}: not a JSON object")
    speaker_a = need_str(conversation, "speaker_a", at)
    need_str(conversation, "speaker_b", at)
    numbers = sorted(int(m.group(1)) for k in conversation if (m := _SESSION.fullmatch(k)))
    if not numbers:
        raise DatasetError(f"{at}.session_1: missing (a conversation has session_N lists)")
    sessions: list[HistorySession] = []
    texts: dict[str, str] = {}  # dia_id -> the turn's text, for the questions' evidence
    for number in numbers:
        key = f"session_{number}"
        date_key = f"{key}_date_time"
        date_text = need_str(conversation, date_key, at)
        try:
            when = locomo_date(date_text)
        except ValueError as e:
            raise DatasetError(f"{at}.{date_key}: {e}") from None
        messages = []
        for t, turn in enumerate(need_list(conversation, key, at)):
            turn_at = f"{at}.{key}[{t}]"
            if not isinstance(turn, dict):
                raise DatasetError(f"{turn_at}: not a JSON object")
            speaker = need_str(turn, "speaker", turn_at)
            text = need_str(turn, "text", turn_at)
            dia = need_str(turn, "dia_id", turn_at)
            caption = turn.get("blip_caption")
            if isinstance(caption, str) and caption:
                # The photo is part of what was said; its caption is the dataset's words for it.
                text = f"{text} [shares a photo: {caption}]"
            role = "user" if speaker == speaker_a else "assistant"
            messages.append(HistoryMessage(role=role, content=text, speaker=speaker))
            texts[dia] = text
        sessions.append(HistorySession(session_id=key, date=when, messages=messages))
    sessions.sort(key=lambda s: s.date)
    history = History(id=f"c.{_safe(sample)}", sessions=sessions)
    asked = sessions[-1].date
    memories = []
    for q, qa in enumerate(need_list(entry, "qa", where)):
        qa_at = f"{where}.qa[{q}]"
        if not isinstance(qa, dict):
            raise DatasetError(f"{qa_at}: not a JSON object")
        category = need(qa, "category", qa_at)
        if not isinstance(category, int) or isinstance(category, bool) or category < 1:
            raise DatasetError(f"{qa_at}.category: not a positive integer ({category!r})")
        gold_field = "adversarial_answer" if category == ADVERSARIAL else "answer"
        gold = need(qa, gold_field, qa_at)
        if not isinstance(gold, str | int | float) or isinstance(gold, bool):
            raise DatasetError(f"{qa_at}.{gold_field}: a string or a number")
        evidence = need_list(qa, "evidence", qa_at)
        dias = [f"D{s}:{t}" for e in evidence if isinstance(e, str) for s, t in _DIA.findall(e)]
        memories.append(
            Memory(
                source="locomo",
                history=history,
                question=Question(
                    question_id=f"{history.id}.q{q}",
                    question=need_str(qa, "question", qa_at),
                    answer=str(gold),
                    question_date=asked,
                    category=category,
                    abstention=category == ADVERSARIAL,
                    evidence_sessions=sorted(
                        {f"session_{d[1:].split(':')[0]}" for d in dias},
                        key=lambda s: int(s.split("_")[1]),
                    ),
                    evidence_texts=[texts[d] for d in dias if d in texts],
                ),
            )
        )
    return memories


def _safe(text: str) -> str:
    return "".join(c if (c.isascii() and c.isalnum()) or c in "._:-" else "_" for c in text)
