"""A study's items: scripted conversations (one JSON object a line: id, clock, turns) or a
memory benchmark's drawn questions, each a one-turn item asking its question at its date."""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from harness.datasets import DatasetError, Drawn, ItemsSource, Memory, draw_from, load_drawn
from harness.errors import HarnessError
from harness.study.invalid import field_errors
from rundir.jsonlines import read_lines


class TurnScript(BaseModel):
    model_config = ConfigDict(extra="forbid")

    user: str
    addon: str = ""
    # A memory control (harness/checks/memory_controls.py): words (case-insensitive) and a regex the
    # arm must surface in this turn's reply or in its main call's context.
    expect: list[str] = Field(default_factory=list)
    expect_regex: str | None = None

    @field_validator("expect")
    @classmethod
    def _words(cls, value: list[str]) -> list[str]:
        if any(not word.strip() for word in value):
            raise ValueError("an expected word is empty; list the words the arm must surface")
        return value

    @field_validator("expect_regex")
    @classmethod
    def _regex(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as e:
                raise ValueError(f"not a regular expression ({e})") from None
        return value

    @model_validator(mode="after")
    def _not_given(self) -> TurnScript:
        # A word the turn itself says is in the main call's context of every arm, memory or
        # none: such a control could never fail.
        said = f"{self.user}\n{self.addon}".casefold()
        given = [word for word in self.expect if word.casefold() in said]
        if given:
            raise ValueError(
                f"expect {given}: this turn's own text says it, so every arm would pass; "
                "expect what an earlier turn said"
            )
        return self


class Item(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9._:-]+$")
    clock: datetime
    turns: list[TurnScript] = Field(min_length=1)
    context: str | None = None
    # A memory benchmark's question: its history is ingested (once per arm and history) before
    # the turns, which ask the question on a fresh copy of the arm's store.
    memory: Memory | None = None


def read_items(path: Path, source: ItemsSource | None) -> tuple[list[Item], Drawn | None]:
    """The study's items: scripted (jsonl) or a memory benchmark's drawn questions."""
    if source is None:
        return load_items(path), None
    if source.format == "jsonl":
        items = load_items(path)
        if not source.draws:
            return items, None
        if any(item.memory is None for item in items):
            raise HarnessError(
                f"{path}: n, stratify and per_conversation_max draw memory items; this file has "
                "items without a memory field",
                hint="remove the draw fields from [items], or give every item its memory",
            )
        drawn = draw_from([item.memory for item in items if item.memory], source)
        keep = {id(m) for m in drawn.memories}
        return [item for item in items if id(item.memory) in keep], drawn
    try:
        drawn = load_drawn(path, source)
    except DatasetError as e:
        raise HarnessError(
            f"not {source.format}: {e}",
            hint=f"point [items] path at a {source.format} file, or fix format",
        ) from None
    return [memory_item(m) for m in drawn.memories], drawn


def memory_item(memory: Memory) -> Item:
    """A memory benchmark's question as an item: one turn asking it at its date."""
    safe = "".join(
        c if (c.isascii() and c.isalnum()) or c in "._:-" else "_"
        for c in memory.question.question_id
    )
    return Item(
        id=safe,
        clock=memory.question.question_date,
        turns=[TurnScript(user=memory.question.question)],
        memory=memory,
    )


def load_items(path: Path) -> list[Item]:
    try:
        lines = read_lines(path)
    except (OSError, UnicodeDecodeError) as e:
        raise HarnessError(
            f"cannot read items file {path}: {e}", hint="check the 'items' path and permissions"
        ) from e
    items: list[Item] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = Item.model_validate(json.loads(line))
        except json.JSONDecodeError as e:
            raise HarnessError(
                f"{path}:{number}: not JSON: {e.msg}", hint="one JSON object a line"
            ) from None
        except ValidationError as e:
            raise HarnessError(
                f"{path}:{number}: invalid item:\n  {field_errors(e)}",
                hint='each line: {"id": "...", "clock": "2024-05-01T10:00:00", '
                '"turns": [{"user": "..."}]}',
            ) from None
        if item.id in seen:
            raise HarnessError(f"{path}:{number}: item id {item.id!r} appears twice")
        seen.add(item.id)
        items.append(item)
    if not items:
        raise HarnessError(f"items file {path} has no items", hint="add one JSON object a line")
    return items
