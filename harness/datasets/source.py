"""A study's `[items]` table: which file, in which format, and the draw taken from it.

    [items]
    format = "longmemeval"          # "longmemeval" | "locomo" | "jsonl" (the harness's own items)
    path = "longmemeval_s.json"     # relative to the study file
    n = 50                          # questions drawn (default: all)
    seed = 7                        # the draw's seed
    stratify = "question_type"      # LongMemEval: "question_type"; LoCoMo: "category"
    per_conversation_max = 5        # at most this many questions of one conversation (LoCoMo)
    net_lambda = 1.0                # NET(lambda)'s cost of a wrong answer (run/net_score.py)

`items = "items.jsonl"` (a string) is still the harness's scripted items, undrawn.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from harness.datasets import locomo, longmemeval
from harness.datasets.draw import Drawn, draw
from harness.datasets.model import Memory

Format = Literal["longmemeval", "locomo", "jsonl"]
_STRATA = {"longmemeval": "question_type", "locomo": "category"}


class ItemsSource(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: Format
    path: str = Field(min_length=1)
    n: int | None = Field(None, gt=0)
    seed: int = 0
    stratify: Literal["question_type", "category"] | None = None
    per_conversation_max: int | None = Field(None, gt=0)
    net_lambda: float = Field(1.0, ge=0, allow_inf_nan=False)

    @model_validator(mode="after")
    def _stratum_of_format(self) -> ItemsSource:
        if self.stratify and self.format in _STRATA and _STRATA[self.format] != self.stratify:
            raise ValueError(
                f'stratify = "{self.stratify}" is not a field of {self.format}; use '
                f'"{_STRATA[self.format]}"'
            )
        return self

    @property
    def draws(self) -> bool:
        return any(v is not None for v in (self.n, self.stratify, self.per_conversation_max))


def load_memories(path: Path, source: ItemsSource) -> list[Memory]:
    """Every question in the file, in its order. Raises DatasetError naming the first bad field."""
    if source.format == "longmemeval":
        return longmemeval.load(path)
    if source.format == "locomo":
        return locomo.load(path)
    raise ValueError("jsonl items are read by harness.study.load_items")


def load_drawn(path: Path, source: ItemsSource) -> Drawn:
    """The drawn questions of a dataset file. LongMemEval is read lazily (an index of the file,
    then only the drawn questions: harness/datasets/index.py); LoCoMo (a few MB) is loaded whole
    and drawn from."""
    if source.format == "longmemeval":
        return longmemeval.load_drawn(
            path, source.n, source.seed, source.stratify, source.per_conversation_max
        )
    return draw_from(load_memories(path, source), source)


def draw_from(memories: list[Memory], source: ItemsSource) -> Drawn:
    return draw(memories, source.n, source.seed, source.stratify, source.per_conversation_max)
