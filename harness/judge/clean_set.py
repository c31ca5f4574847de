"""A flag rubric's declared clean set: replies that two independent readers confirmed clean.

A clean control (a reply the judge must not flag) is drawn only from here, never from the arms'
own replies: an arm that really violates the rubric would otherwise make honest judges "flag a
clean control", and the axis could never get a verdict (study design 4.5: "20 clean items that
two independent readers confirm"). The rubric names the file (`clean = "FILE.jsonl"`, beside the
rubric); each line is one reply with the conversation it answers and its readers:

    {"item": "lisbon", "turn": 0, "reply": "Noted: your sister lives in Lisbon.",
     "readers": ["ana", "ben"]}
    {"messages": ["I keep bees.", "What do I keep?"], "reply": "You keep bees.",
     "readers": ["ana", "ben"]}

`item` and `turn` name a turn of the judged study (the judge sees that turn's conversation, as it
sees the arms'); `messages` gives a conversation of its own (a calibration-only card). Every clean
control's prompt is hashed in tasks.jsonl like any other, so what the judges were shown is bound.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from harness.errors import HarnessError

READERS_NEEDED = 2


class CleanEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    item: str | None = None
    turn: int | None = Field(None, ge=0)
    messages: list[str] | None = None
    reply: str = Field(min_length=1)
    readers: list[str]

    @model_validator(mode="after")
    def _placed_and_confirmed(self) -> CleanEntry:
        placed = self.item is not None and self.turn is not None
        if placed == (self.messages is not None):
            raise ValueError("give item and turn (a turn of the study) or messages, not both")
        if self.messages is not None and not any(m.strip() for m in self.messages):
            raise ValueError("messages: the user's messages the reply answers")
        names = {r.strip().lower() for r in self.readers if r.strip()}
        if len(names) < READERS_NEEDED:
            raise ValueError(
                f"readers: {len(names)} distinct reader(s); a clean item needs "
                f"{READERS_NEEDED} independent readers who confirmed it clean"
            )
        return self


@dataclass(frozen=True)
class CleanSet:
    path: Path
    sha256: str
    entries: tuple[CleanEntry, ...]


def load_clean_set(path: Path, rubric: str) -> CleanSet:
    try:
        data = path.read_bytes()
        lines = data.decode("utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise HarnessError(
            f"rubric {rubric}: cannot read its clean set {path}: {e}",
            hint="clean = a JSONL file beside the rubric, one confirmed-clean reply a line",
        ) from None
    entries = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            entries.append(CleanEntry.model_validate_json(line))
        except ValidationError as e:
            first = e.errors()[0]
            where = "".join(f"{part}: " for part in first["loc"])
            what = str(first["msg"]).removeprefix("Value error, ")
            raise HarnessError(
                f"clean set {path} line {number}: {where}{what}",
                hint='each line: {"item", "turn"} or {"messages"}, "reply", and "readers" (two)',
            ) from None
    if not entries:
        raise HarnessError(
            f"rubric {rubric}: its clean set {path} holds no reply",
            hint="add the replies two readers confirmed clean, one JSON object a line",
        )
    return CleanSet(path=path, sha256=hashlib.sha256(data).hexdigest(), entries=tuple(entries))
