"""`questions.jsonl`: one `QuestionRecord` per memory benchmark question per arm (seam v2).

What a judge-free score and a reader of the benchmark need, written once the question's turn is
in: the question's type or category, its gold answer and whether it is an abstention question,
the arm's answer, whether the evidence sessions' text reached the arm's main call (retrieval
parity: an answer is only possible if it did), and what ingesting its history and answering it
cost, apart. Abstention questions get no exact-match score (its gold is a refusal, which no
string comparison decides); the judging stage grades every question. `net` is the judge-free
answer-or-abstain score NET(lambda) (harness/run/memory/net_score.py): +1 right (for an abstention
question: abstained), 0 abstained on an answerable question, -lambda wrong; None unanswered.
"""

from __future__ import annotations

import json
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Literal

from pydantic import Field

from rundir.jsonlines import JsonLinesAppender, read_lines
from rundir.model import RunDirModel

QUESTION_SCHEMA: Literal[1] = 1


class QuestionRecord(RunDirModel):
    schema_: Literal[1] = Field(QUESTION_SCHEMA, alias="schema")
    run: str
    item: str
    arm: str
    question_id: str
    source: str  # longmemeval | locomo | jsonl
    history: str
    # When the question was asked (the dataset's question_date: the arm's pinned clock for its
    # turn), and the dates of the first and last session of its history, as the arm's clock
    # had them while each was ingested. None in records written before they were kept.
    question_date: datetime | None = None
    history_from: datetime | None = None
    history_to: datetime | None = None
    question_type: str | None = None
    category: int | None = None
    abstention: bool
    gold: str
    answer: str
    outcome: str  # the answer turn's (turns.jsonl)
    # Normalised (case, punctuation, articles, spaces) answer == gold, and gold within answer;
    # None for an abstention question.
    exact_match: bool | None = None
    gold_in_answer: bool | None = None
    abstained: bool = False  # the answer declines to answer (net_score.abstains)
    net: float | None = None  # NET(net_lambda); None when the arm gave no answer
    net_lambda: float | None = None
    evidence_sessions: list[str] = Field(default_factory=list)
    evidence_total: int = 0  # evidence turns the dataset marks
    evidence_found: int = 0  # of them, found in the text of the question's main calls
    # All found; None when the dataset marks none, and for an abstention question.
    evidence_reached: bool | None = None
    ingest_sessions: int = 0  # ingested for this question (0: it reused its history's snapshot)
    ingest_failed: int = 0
    ingest_seconds: float = 0.0
    ingest_calls: int = 0
    ingest_cost_usd: Decimal = Decimal(0)
    snapshot_sha256: str | None = None
    first_token_s: float | None = None
    last_token_s: float | None = None
    answer_calls: int = 0
    answer_cost_usd: Decimal = Decimal(0)


class QuestionLog(JsonLinesAppender):
    """questions.jsonl, made at its first record: only a memory benchmark has the file."""


def read_questions(path: Path) -> list[QuestionRecord]:
    if not path.exists():
        return []
    return [
        QuestionRecord.model_validate(json.loads(line)) for line in read_lines(path) if line.strip()
    ]
