"""What a memory benchmark's item is once loaded, whichever file it came from.

A `History` is the conversation an arm's memory takes in before it is asked anything: sessions,
each at its own date. A `Question` is asked after the whole history is in, at its own date. An
item of a study is one question with the history it is asked about; LoCoMo's questions share
their conversation's history (the same `History` object, ingested once per arm).
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from rundir.errors import UserError


class DatasetError(UserError, ValueError):
    """A file that is not in the format it was named as; the message names the first bad field.
    A user error (one line, no traceback) also when a run meets it: a question is read in full
    only when its item runs (harness/datasets/longmemeval.py), and a bad one stops that run."""


class HistoryMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: Literal["user", "assistant"]
    content: str
    # LoCoMo's two speakers are both people: the name is kept beside the role it was given.
    speaker: str | None = None


class HistorySession(BaseModel):
    model_config = ConfigDict(extra="forbid")

    session_id: str = Field(min_length=1)
    date: datetime
    messages: list[HistoryMessage]


class History(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # Unique in the study: the key its ingestion and its store's snapshot are kept under.
    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9._:-]+$")
    sessions: list[HistorySession] = Field(min_length=1)

    def full(self) -> History:
        """The history with every session's messages. A history read lazily from a large file
        (harness/datasets/longmemeval.py's StoredHistory) holds its sessions' ids and dates
        only, and reads its messages here, when its item's turn comes; this one has them."""
        return self


class Question(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question_id: str = Field(min_length=1)
    question: str
    answer: str  # the gold answer (LoCoMo's adversarial_answer for category 5)
    question_date: datetime
    # The stratum a draw groups by: LongMemEval's question_type or LoCoMo's category.
    question_type: str | None = None
    category: int | None = None
    # LongMemEval: an id ending `_abs` (the history does not hold the answer); LoCoMo: category 5.
    abstention: bool = False
    evidence_sessions: list[str] = Field(default_factory=list)
    # The text of the turns that hold the evidence (LongMemEval's has_answer turns, LoCoMo's
    # evidence dia_ids): what must reach the arm's main call for the answer to be possible.
    evidence_texts: list[str] = Field(default_factory=list)


class Memory(BaseModel):
    """The memory part of an item: the history to ingest first and the question it asks."""

    model_config = ConfigDict(extra="forbid")

    source: Literal["longmemeval", "locomo", "jsonl"]
    history: History
    question: Question

    def stratum(self, by: str | None) -> str:
        if by == "category":
            return f"category {self.question.category}"
        if by == "question_type":
            return self.question.question_type or "-"
        return "all"
