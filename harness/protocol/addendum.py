"""The protocol's addendum (`[protocol] addendum = "protocol/addendum.toml"`): what changed after
the freeze, as dated entries, never by editing a frozen file.

    [[entry]]
    date = 2026-05-02T09:00:00Z          # a TOML date-time (UTC when it has no offset) or a date
    kind = "amendment"                   # amendment | record | deviation
    file = "protocol/0b.md"              # optional: the frozen file it concerns
    text = "Judge temperature 0 instead of 0.2."
    reason = "The pilot's judges disagreed with themselves at 0.2."   # an amendment needs one

An amendment is made before the first live call it affects; one dated after a live run started
is that run's deviation (it changed the protocol under the data). Deviation entries are reported
with every run. A date without a time on the run's own day cannot show it came first: it counts
as after (fail closed), and the report says to give a time.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from harness.errors import HarnessError

ADDENDUM_SCHEMA: Literal[1] = 1


class Entry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    date: date | datetime  # date first: "2026-05-01" stays a date, not midnight
    kind: Literal["amendment", "record", "deviation"]
    text: str = Field(min_length=1)
    reason: str | None = None
    file: str | None = None

    @model_validator(mode="after")
    def _amendment_has_reason(self) -> Entry:
        if self.kind == "amendment" and not (self.reason or "").strip():
            raise ValueError('an amendment needs its reason (reason = "...")')
        return self

    @property
    def when(self) -> str:
        return self.date.isoformat()


class Addendum(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_: Literal[1] = Field(ADDENDUM_SCHEMA, alias="schema")
    entry: list[Entry] = Field(default_factory=list)


@dataclass(frozen=True)
class Deviation:
    entry: Entry
    why: str  # "recorded deviation", or why an amendment counts as one


def parse_addendum(data: bytes, name: str) -> Addendum:
    """The addendum's entries; a malformed one is refused naming the file and the entry."""
    try:
        raw = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise HarnessError(f"addendum {name} is not valid TOML: {e}") from None
    try:
        return Addendum.model_validate(raw)
    except ValidationError as e:
        first = e.errors(include_url=False)[0]
        loc = first["loc"]
        where = f"entry {int(loc[1]) + 1}" if len(loc) > 1 and loc[0] == "entry" else "file"
        field = ".".join(str(p) for p in loc[2:]) if len(loc) > 2 else ""
        msg = str(first["msg"]).removeprefix("Value error, ")
        raise HarnessError(
            f"addendum {name}: {where}{' ' + field if field else ''}: {msg}",
            hint="each [[entry]] has date, kind (amendment, record, deviation), text, and an "
            "amendment its reason (docs/protocol.md)",
        ) from None


def load_addendum(path: Path) -> Addendum:
    try:
        data = path.read_bytes()
    except OSError as e:
        raise HarnessError(f"cannot read addendum {path}: {e.strerror}") from None
    return parse_addendum(data, str(path))


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


def deviations(addendum: Addendum, mode: str, started: str) -> list[Deviation]:
    """The deviations of a run of `mode` that started at `started` (ISO 8601): every deviation
    entry, and for a live run every amendment dated after it started."""
    begun = _utc(datetime.fromisoformat(started))
    out = []
    for entry in addendum.entry:
        if entry.kind == "deviation":
            out.append(Deviation(entry, "recorded deviation"))
        elif entry.kind == "amendment" and mode == "live":
            if isinstance(entry.date, datetime):
                if _utc(entry.date) > begun:
                    out.append(Deviation(entry, "amendment dated after this live run started"))
            elif entry.date >= begun.date():
                out.append(
                    Deviation(
                        entry,
                        "amendment dated the run's day or later without a time: it cannot show "
                        "it preceded the run (give its date a time)",
                    )
                )
    return out
