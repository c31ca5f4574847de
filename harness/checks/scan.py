"""Canary tokens and forgotten words, searched in everything a run served and every store it kept.

A canary is a token planted in one item at a known moment (its event). An arm that shows it
before that moment learned it from somewhere it should not (answers shipped in its materials, a
store shared between sessions): its results are void. A forgotten word is one the user asked the
arm to forget; every place it turns up after the forget turn is listed, served or stored.

The canaries file (`--canaries`), JSONL (one object a line) or TOML (`[[canary]]` tables):

    {"token": "ZEBRA-7731", "item": "locker", "event_turn": 1}
    {"token": "OSAKA-AQ-20", "item": "trip", "event_time": "2024-09-03T08:15:00"}

- `event_turn` (0-based, as in turns.jsonl): the turn that plants the token. The canary belongs
  to its item: a hit in that item before the turn, or in any other item's session at all, voids
  the arm (sessions are independent; only this one was told).
- `event_time`: when the token becomes knowable on the study's pinned clock. A hit in a session
  whose pinned clock (its item's `clock`, from the study's items file) is earlier voids the arm,
  whatever the item: for studies whose items are one user's consecutive sessions.

The forget file (`--forget`), JSONL or TOML (`[[forget]]`): `{"word": "cello", "item": "lisbon",
"forget_turn": 2}`. Listed: a hit in that item after the forget turn, in any session the arm ran
after that item, and anywhere in a store (stores are exported at the end of the run).

What is searched: every request and response body of calls.jsonl (from bodies/pack.bin, with any
content-encoding undone; JSON string values unescaped; the text deltas of a streamed reply joined,
so a token split across events is found), every turn text of turns.jsonl, and every file under
each `--store ARM=DIR`. Matching is case-insensitive substring search. A call outside any session
(between items) counts as part of the session that arm ran last. Fail closed: a body the scan
cannot read voids its arm, since it could hide a canary.
"""

from __future__ import annotations

import json
import tomllib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from harness.checks.scan_text import body_texts, file_texts
from harness.errors import HarnessError
from harness.study import load_items
from rundir.calls import PackReader, read_calls
from rundir.jsonlines import split_lines
from rundir.runs import read_header
from rundir.turns import read_turns

SCAN_SCHEMA: Literal[1] = 1


class Canary(BaseModel):
    model_config = ConfigDict(extra="forbid")

    token: str = Field(min_length=4)
    item: str
    event_turn: int | None = Field(None, ge=0)
    event_time: datetime | None = None

    @model_validator(mode="after")
    def _one_event(self) -> Canary:
        if (self.event_turn is None) == (self.event_time is None):
            raise ValueError("give exactly one of event_turn and event_time")
        return self


class ForgetWord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    word: str = Field(min_length=2)
    item: str
    forget_turn: int = Field(ge=0)


Where = Literal["request", "response", "turn_text", "store"]


class Hit(BaseModel):
    """One place a canary or a forgotten word was found."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["canary", "forget"]
    token: str
    arm: str
    where: Where
    item: str | None = None  # the session it was found in (None: a store file)
    turn: int | None = None
    call: int | None = None  # the call's seq in calls.jsonl
    time: str | None = None  # the call's wall-clock start, ISO (None for turn texts and stores)
    clock: str | None = None  # the session's pinned clock, when the canary needs it
    path: str | None = None  # a store file, relative to its store folder
    # before_event / other_item void the arm; after_event is the canary doing its job.
    relation: Literal["before_event", "other_item", "after_event", "after_forget", "stored"]
    voids: bool = False
    reason: str


class ArmScan(BaseModel):
    model_config = ConfigDict(extra="forbid")

    arm: str
    void: bool = False
    reasons: list[str] = Field(default_factory=list)
    canary_hits: int = 0
    forgotten_hits: int = 0


class ScanResult(BaseModel):
    """What `harness scan` found; the report voids every arm whose `void` is true."""

    model_config = ConfigDict(extra="forbid")

    schema_: Literal[1] = Field(SCAN_SCHEMA, alias="schema")
    run_id: str
    canaries: list[Canary]
    forget: list[ForgetWord]
    searched: dict[str, int]  # bodies, turn_texts, store_files
    unreadable: list[str] = Field(default_factory=list)
    arms: dict[str, ArmScan]
    hits: list[Hit]

    @property
    def void_arms(self) -> list[str]:
        return sorted(name for name, arm in self.arms.items() if arm.void)


def load_entries(path: Path, model: type[Canary] | type[ForgetWord], table: str) -> list[Any]:
    """A canaries or forget file, JSONL or TOML; every entry validated."""
    try:
        text = path.read_text(encoding="utf-8")
        rows = (
            tomllib.loads(text).get(table, [])
            if path.suffix == ".toml"
            else [json.loads(line) for line in split_lines(text) if line.strip()]
        )
    except (OSError, ValueError) as e:
        raise HarnessError(
            f"cannot read {path}: {e}",
            hint=f"one JSON object a line, or TOML [[{table}]] tables (see harness/checks/scan.py)",
        ) from e
    entries = []
    for number, row in enumerate(rows, 1):
        try:
            entries.append(model.model_validate(row))
        except ValidationError as e:
            first = e.errors()[0]
            raise HarnessError(
                f"{path} entry {number}: {first['msg']} ({'.'.join(map(str, first['loc']))})",
                hint=f"each {table} needs the fields described in harness/checks/scan.py",
            ) from e
    return entries


def scan_run(
    run_dir: Path,
    canaries: list[Canary],
    forget: list[ForgetWord],
    stores: dict[str, list[Path]] | None = None,
) -> ScanResult:
    header = read_header(run_dir).model_dump(by_alias=True, mode="json")
    try:
        turns = read_turns(run_dir / "turns.jsonl")
        calls = read_calls(run_dir / "calls.jsonl") if (run_dir / "calls.jsonl").exists() else []
    except (OSError, ValueError) as e:
        # A record the scan cannot read could be the one holding a canary: no partial verdict.
        raise HarnessError(
            f"cannot read the run's turns or calls: {str(e).splitlines()[0]}",
            hint="run `harness audit RUN_DIR` to see what is damaged",
        ) from e
    arms = {name: ArmScan(arm=name) for name in header.get("study", {}).get("arms", [])}
    for name in [t.arm for t in turns] + [c.arm for c in calls]:
        arms.setdefault(name, ArmScan(arm=name))
    _check_items(canaries, forget, {t.item for t in turns} | {c.item for c in calls if c.item})
    sessions = _SessionOrder(turns, calls)
    clocks = _item_clocks(header) if any(c.event_time for c in canaries) else {}
    searcher = _Searcher(canaries, forget, sessions, clocks)

    pack = PackReader.open(run_dir)
    unreadable: list[str] = []
    if pack.damage is not None:
        unreadable.append(f"bodies/pack.bin from byte {pack.damage[0]}: {pack.damage[1]}")
    bodies = 0
    for call in calls:
        item, turn = sessions.session_of(call.arm, call.seq, call.item, call.turn)
        when = datetime.fromtimestamp(call.timing.start, UTC).isoformat(timespec="milliseconds")
        for where, digest in (("request", call.request_body), ("response", call.response_hash)):
            if digest is None:
                continue
            try:
                texts = body_texts(pack.get(digest))
            except (KeyError, ValueError) as e:
                problem = "missing from the pack" if isinstance(e, KeyError) else str(e)
                unreadable.append(f"call {call.seq} {where} body {digest[:12]}: {problem}")
                _void(arms[call.arm], f"call {call.seq}'s {where} body could not be searched")
                continue
            bodies += 1
            searcher.search(texts, call.arm, where, item, turn, call.seq, when)  # type: ignore[arg-type]
    for record in turns:
        searcher.search([record.text], record.arm, "turn_text", record.item, record.turn)
    store_files = 0
    for arm, folders in (stores or {}).items():
        if arm not in arms:
            raise HarnessError(
                f"store {folders[0]} is for {arm!r}, which is not an arm of this run "
                f"({', '.join(sorted(arms)) or 'none'})",
                hint="name its arm: --store ARM=DIR",
            )
        for folder in folders:
            for path in sorted(p for p in folder.rglob("*") if p.is_file()):
                store_files += 1
                relative = str(path.relative_to(folder))
                searcher.search_store(file_texts(path.read_bytes()), arm, relative)

    for hit in searcher.hits:
        scan = arms.setdefault(hit.arm, ArmScan(arm=hit.arm))
        if hit.kind == "canary":
            scan.canary_hits += 1
        else:
            scan.forgotten_hits += 1
        if hit.voids:
            _void(scan, hit.reason)
    return ScanResult(
        run_id=str(header.get("run_id", run_dir.name)),
        canaries=canaries,
        forget=forget,
        searched={"bodies": bodies, "turn_texts": len(turns), "store_files": store_files},
        unreadable=unreadable,
        arms=arms,
        hits=searcher.hits,
    )


def _check_items(canaries: list[Canary], forget: list[ForgetWord], ran: set[str]) -> None:
    """A misspelt item would turn every sighting into a void (or hide every forgotten word)."""
    named = [(f"canary {c.token}", c.item) for c in canaries if c.event_turn is not None]
    named += [(f"forgotten word {w.word!r}", w.item) for w in forget]
    for what, item in named:
        if item not in ran:
            raise HarnessError(
                f"{what} names item {item!r}, which this run never ran",
                hint=f"use one of its items: {', '.join(sorted(ran)) or 'none'}",
            )


def _void(scan: ArmScan, reason: str) -> None:
    scan.void = True
    if reason not in scan.reasons:
        scan.reasons.append(reason)


class _SessionOrder:
    """Which session each call belongs to, and the order each arm ran its items in."""

    def __init__(self, turns: list[Any], calls: list[Any]) -> None:
        self.rank: dict[tuple[str, str], int] = {}
        for record in turns:  # append order is run order within an arm
            self.rank.setdefault((record.arm, record.item), len(self.rank))
        self.last: dict[tuple[str, int], tuple[str | None, int | None]] = {}
        latest: dict[str, tuple[str | None, int | None]] = {}
        for call in sorted(calls, key=lambda c: c.seq):
            if call.item is not None:
                latest[call.arm] = (call.item, call.turn)
                self.rank.setdefault((call.arm, call.item), len(self.rank))
            self.last[(call.arm, call.seq)] = latest.get(call.arm, (None, None))

    def session_of(
        self, arm: str, seq: int, item: str | None, turn: int | None
    ) -> tuple[str | None, int | None]:
        if item is not None:
            return item, turn
        return self.last.get((arm, seq), (None, None))

    def position(self, arm: str, item: str | None, turn: int | None) -> tuple[int, int] | None:
        if item is None or (arm, item) not in self.rank:
            return None
        return self.rank[(arm, item)], turn if turn is not None else 0


def _item_clocks(header: dict[str, Any]) -> dict[str, datetime]:
    """Each item's pinned clock, from the study's items file, checked against the run's hash."""
    study = header.get("study") or {}
    study_path = Path(str(study.get("study_path", "")))
    hint = "restore the study and its items file as they were when the run was made"
    try:
        items_name = tomllib.loads(study_path.read_text(encoding="utf-8"))["items"]
    except (OSError, ValueError, KeyError) as e:
        raise HarnessError(f"an event_time canary needs the study's items ({e})", hint=hint) from e
    items_path = study_path.parent / items_name
    from rundir.runs import sha256_file

    if not items_path.is_file() or sha256_file(items_path) != study.get("items_sha256"):
        raise HarnessError(f"{items_path} is not the items file this run used", hint=hint)
    return {item.id: _aware(item.clock) for item in load_items(items_path)}


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


class _Searcher:
    def __init__(
        self,
        canaries: list[Canary],
        forget: list[ForgetWord],
        sessions: _SessionOrder,
        clocks: dict[str, datetime],
    ) -> None:
        self.canaries, self.forget = canaries, forget
        self.sessions, self.clocks = sessions, clocks
        self.hits: list[Hit] = []

    def search(
        self,
        texts: list[str],
        arm: str,
        where: Where,
        item: str | None,
        turn: int | None,
        call: int | None = None,
        time: str | None = None,
    ) -> None:
        folded = [text.casefold() for text in texts]
        found: dict[str, Any] = dict(
            arm=arm, where=where, item=item, turn=turn, call=call, time=time
        )
        at = f"{where} of {item or 'no session'} turn {turn}"
        at += f" (call {call})" if call is not None else ""
        for canary in self.canaries:
            if any(canary.token.casefold() in text for text in folded):
                relation, reason, clock = self._judge_canary(canary, arm, item, turn)
                voids = relation in ("before_event", "other_item")
                self.hits.append(
                    Hit(
                        kind="canary",
                        token=canary.token,
                        relation=relation,
                        voids=voids,
                        reason=f"{reason}: {at}",
                        clock=clock,
                        **found,
                    )
                )
        for entry in self.forget:
            if any(entry.word.casefold() in text for text in folded):
                here = self.sessions.position(arm, item, turn)
                then = self.sessions.position(arm, entry.item, entry.forget_turn)
                if here is not None and then is not None and here > then:
                    reason = f"{entry.word!r} served after its forget turn: {at}"
                    self.hits.append(
                        Hit(
                            kind="forget",
                            token=entry.word,
                            relation="after_forget",
                            reason=reason,
                            **found,
                        )
                    )

    def _judge_canary(
        self, canary: Canary, arm: str, item: str | None, turn: int | None
    ) -> tuple[Any, str, str | None]:
        """(relation, why, the session's clock when the canary is timed by the clock)."""
        if canary.event_time is not None:
            clock = self.clocks.get(item) if item is not None else None
            event = _aware(canary.event_time).isoformat()
            if clock is None:
                return "before_event", f"canary {canary.token} served with no session clock", None
            if clock >= _aware(canary.event_time):
                return "after_event", "at or after its event time", clock.isoformat()
            why = f"served before its event (clock {clock.isoformat()} < {event})"
            return "before_event", f"canary {canary.token} {why}", clock.isoformat()
        if item != canary.item:
            return "other_item", f"canary {canary.token} of {canary.item} served outside it", None
        here = self.sessions.position(arm, item, turn)
        event_at = self.sessions.position(arm, item, canary.event_turn)
        if here is None or event_at is None or here < event_at:
            why = f"served before its event turn {canary.event_turn}"
            return "before_event", f"canary {canary.token} {why}", None
        return "after_event", "at or after its event turn", None

    def search_store(self, texts: list[str], arm: str, path: str) -> None:
        # Stores are exported after the run, after every event and forget turn: a canary there
        # is expected (listed, not voiding); a forgotten word there was not forgotten.
        folded = [text.casefold() for text in texts]
        wanted: list[tuple[Literal["canary", "forget"], str, str]] = [
            ("forget", entry.word, f"{entry.word!r} still stored") for entry in self.forget
        ] + [("canary", canary.token, "canary stored") for canary in self.canaries]
        for kind, token, what in wanted:
            if any(token.casefold() in text for text in folded):
                self.hits.append(
                    Hit(kind=kind, token=token, arm=arm, where="store", path=path,
                        relation="stored", reason=f"{what}: {path}")
                )  # fmt: skip
