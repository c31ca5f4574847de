"""Ledger entries: one JSON line each, chained by SHA-256 over RFC 8785 canonical JSON.

A line is `{"schema", "seq", "prev", "hash", "time", "kind", "fields"}`. `hash` is the SHA-256 of
the canonical JSON of every other key, and `prev` is the previous line's `hash` (64 zeros for the
first), so editing, removing or reordering any line breaks the chain at that line. Money is
written as decimal strings: a JSON float would round it.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

import canonical

LEDGER_SCHEMA = 1
GENESIS = "0" * 64  # what the first entry chains to (its `prev`)

Kind = Literal[
    "stage_opened",
    "run_reserved",
    "run_refused",
    "calls_settled",
    "run_settled",
    "reconciled",
    "live_job_taken_over",
]


class _Fields(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class StageOpened(_Fields):
    stage: str = Field(min_length=1)
    cap_usd: Decimal = Field(ge=0)


class RunReserved(_Fields):
    stage: str = Field(min_length=1)
    run_id: str = Field(min_length=1)
    cap_usd: Decimal = Field(ge=0)


class RunRefused(_Fields):
    stage: str
    run_id: str
    cap_usd: Decimal
    why: str


class CallSettlement(_Fields):
    """One call's final cost, as the proxy booked it (flags: e.g. `cut`, `over_reservation`)."""

    run_id: str = Field(min_length=1)
    seq: int = Field(ge=0)
    cost_usd: Decimal = Field(ge=0)
    flags: tuple[str, ...] = ()

    @field_validator("flags", mode="before")
    @classmethod
    def _tuple(cls, v: Any) -> Any:
        return tuple(v) if isinstance(v, list) else v


class CallsSettled(_Fields):
    calls: tuple[CallSettlement, ...] = Field(min_length=1)


Basis = Literal["settlements", "call_log", "full_reservation"]


class RunSettled(_Fields):
    """A run closed: `total_usd` is its computed spend, `basis` says where the figure came from."""

    run_id: str
    in_flight: Literal[0]  # a run with calls in flight is not over; see Ledger.settle_run
    total_usd: Decimal = Field(ge=0)
    basis: Basis = "settlements"
    note: str = ""


class Reconciled(_Fields):
    """The vendor's figure for one or more settled runs, from a usage export."""

    run_ids: tuple[str, ...] = Field(min_length=1)
    vendor_usd: Decimal = Field(ge=0)
    computed_usd: Decimal = Field(ge=0)
    source: str
    source_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


class LiveJobTakenOver(_Fields):
    """A live job took over the keys from a job that died holding them (`ledger.live_job`)."""

    run_id: str = Field(min_length=1)
    stale_run_id: str = Field(min_length=1)
    stale_pid: int
    stale_host: str
    stale_since: str


FIELDS_BY_KIND: dict[str, type[_Fields]] = {
    "stage_opened": StageOpened,
    "run_reserved": RunReserved,
    "run_refused": RunRefused,
    "calls_settled": CallsSettled,
    "run_settled": RunSettled,
    "reconciled": Reconciled,
    "live_job_taken_over": LiveJobTakenOver,
}


class Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    schema_: Literal[1] = Field(1, alias="schema")  # LEDGER_SCHEMA
    seq: int = Field(ge=1)
    prev: str = Field(pattern=r"^[0-9a-f]{64}$")
    hash: str = Field(pattern=r"^[0-9a-f]{64}$")
    time: str
    kind: Kind
    fields: dict[str, Any]

    def typed(self) -> _Fields:
        return FIELDS_BY_KIND[self.kind].model_validate(self.fields)

    def to_line(self) -> bytes:
        # Canonical bytes on disk too, so a line can be re-hashed by any RFC 8785 tool.
        return canonical.dumps(self.model_dump(by_alias=True)) + b"\n"


def entry_hash(body: dict[str, Any]) -> str:
    """SHA-256 over the canonical JSON of an entry without its `hash` key."""
    unhashed = {k: v for k, v in body.items() if k != "hash"}
    return hashlib.sha256(canonical.dumps(unhashed)).hexdigest()


def make_entry(seq: int, prev: str, kind: Kind, fields: _Fields) -> Entry:
    body: dict[str, Any] = {
        "schema": LEDGER_SCHEMA,
        "seq": seq,
        "prev": prev,
        "time": datetime.now(UTC).isoformat(timespec="microseconds"),
        "kind": kind,
        "fields": fields.model_dump(mode="json"),
    }
    body["hash"] = entry_hash(body)
    return Entry.model_validate(body)


class LineProblem(ValueError):
    """A line that is not a valid, correctly chained entry."""


def parse_line(raw: bytes, expect_seq: int, expect_prev: str) -> Entry:
    """Parse one line and check it against the chain so far; raise LineProblem saying why."""
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as e:
        raise LineProblem(f"not JSON ({e})") from e
    if not isinstance(body, dict):
        raise LineProblem("not a JSON object")
    if body.get("schema") != LEDGER_SCHEMA:
        raise LineProblem(f"schema {body.get('schema')!r}, this harness reads {LEDGER_SCHEMA}")
    try:
        entry = Entry.model_validate(body)
    except ValidationError as e:
        raise LineProblem(f"not a ledger entry: {e.errors()[0]['msg']}") from e
    if entry_hash(body) != entry.hash:
        raise LineProblem("hash does not match the line's content (the line was edited)")
    if entry.seq != expect_seq:
        raise LineProblem(
            f"seq {entry.seq} where {expect_seq} was expected (a line was removed or moved)"
        )
    if entry.prev != expect_prev:
        raise LineProblem("prev does not match the previous line's hash (lines removed or moved)")
    try:
        entry.typed()
    except ValidationError as e:
        err = e.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise LineProblem(f"{entry.kind} field {where}: {err['msg']}") from e
    return entry
