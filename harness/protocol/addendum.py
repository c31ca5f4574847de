"""The protocol's addendum (`[protocol] addendum = "protocol/addendum.toml"`): what changed after
the freeze, as dated entries, never by editing a frozen file.

    [[entry]]
    date = 2026-05-02T09:00:00Z          # a TOML date-time (UTC when it has no offset) or a date
    kind = "amendment"                   # amendment | record | deviation
    file = "protocol/0b.md"              # optional: the frozen file it concerns
    text = "Judge temperature 0 instead of 0.2."
    reason = "The pilot's judges disagreed with themselves at 0.2."   # an amendment needs one

    [[entry]]                            # a frozen file the study no longer names
    date = 2026-05-03T09:00:00Z
    kind = "withdrawal"
    file = "protocol/0c.md"
    text = "Section 0c withdrawn: the arm it described was dropped."
    reason = "Its engine cannot run offline."

An amendment (or a withdrawal) is made before the first live call it affects; one dated after a
live run started is that run's deviation (it changed the protocol under the data). Deviation
entries are reported with every run. A date without a time on the run's own day cannot show it
came first: it counts as after (fail closed), and the report says to give a time.

A run reads its own copy of the addendum (rundir/runs/protocol.py), never the study's as it is now:
an entry deleted since stays the run's. Entries the study's addendum gained after the run are
added (`run_deviations`): a deviation found later is the run's, and an amendment dated before a
live run that its copy does not hold was backdated, which is that run's deviation too.
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
    kind: Literal["amendment", "record", "deviation", "withdrawal"]
    text: str = Field(min_length=1)
    reason: str | None = None
    file: str | None = None

    @model_validator(mode="after")
    def _amendment_has_reason(self) -> Entry:
        if self.kind in ("amendment", "withdrawal") and not (self.reason or "").strip():
            raise ValueError(f'an {self.kind} needs its reason (reason = "...")')
        if self.kind == "withdrawal" and not self.file:
            raise ValueError('a withdrawal names the frozen file it withdraws (file = "...")')
        return self

    @property
    def when(self) -> str:
        return self.date.isoformat()


class Addendum(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_: Literal[1] = Field(ADDENDUM_SCHEMA, alias="schema")
    entry: list[Entry] = Field(default_factory=list)

    def withdrawn(self) -> set[str]:
        """The frozen files a withdrawal entry took out of the protocol."""
        return {e.file for e in self.entry if e.kind == "withdrawal" and e.file}


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
        elif entry.kind in ("amendment", "withdrawal") and mode == "live":
            if isinstance(entry.date, datetime):
                if _utc(entry.date) > begun:
                    out.append(Deviation(entry, f"{entry.kind} dated after this live run started"))
            elif entry.date >= begun.date():
                out.append(
                    Deviation(
                        entry,
                        f"{entry.kind} dated the run's day or later without a time: it cannot show "
                        "it preceded the run (give its date a time)",
                    )
                )
    return out


def run_deviations(
    copy: Addendum, now: Addendum | None, mode: str, started: str
) -> list[Deviation]:
    """A run's deviations: from its own copy of the addendum, then from what the study's addendum
    (`now`, when at hand) gained since: a later deviation entry, a later amendment, or one dated
    before a live run although the run's copy lacks it (backdated)."""
    out = deviations(copy, mode, started)
    for entry in now.entry if now is not None else []:
        if entry in copy.entry:
            continue
        if entry.kind == "deviation":
            out.append(Deviation(entry, "deviation recorded after the run"))
        elif entry.kind in ("amendment", "withdrawal") and mode == "live":
            late = deviations(Addendum(entry=[entry]), mode, started)
            out += late or [
                Deviation(
                    entry,
                    f"{entry.kind} dated before this live run but missing from the run's copy "
                    "of the addendum: added after the run, backdated",
                )
            ]
    return out


def removed_since(copy: Addendum, now: Addendum) -> list[Entry]:
    """Entries of the run's copy the study's addendum no longer holds (it may only grow)."""
    return [entry for entry in copy.entry if entry not in now.entry]
