"""The reservation journal: `reservations.jsonl` in the run directory, covering a live call BEFORE
it is forwarded, so a proxy that dies mid-call (kill -9) never leaves a call unpriced.

Two kinds of line:
- `call`: one per forwarded call (seq, reservation). Written, not fsynced, just after the call has
  gone out: it survives the proxy's death (the kernel holds it), not the machine's. A proxy killed
  in between loses the line, not the money: the call drew from a durable block before it left.
- `block`: a durable (fsynced) allowance that covers the reservations drawn from it. Calls draw
  from the current block in memory and a new block is written ahead of need in the background,
  so the common call waits for no fsync (an fsync per call cost ~3 ms here: bench/README.md).
  A call that outruns the blocks waits for the next one.

Recovery (`recover_spend`) charges every logged call its logged cost, and every call that was
forwarded but never logged its reservation: from its `call` line, or, should those lines be lost
(with the machine, or with a proxy killed as a call left), from the durable blocks minus the
reservations of the logged calls. The larger figure is taken, so a crash can over-charge by at
most the unused part of the last block and never under-charges.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, TypeAdapter, ValidationError

from rundir.errors import RunDirError
from rundir.model import RunDirModel

JOURNAL_NAME = "reservations.jsonl"
JOURNAL_SCHEMA: Literal[1] = 1
MIN_BLOCK = Decimal("0.05")
BLOCK_CALLS = 8  # a block covers about this many calls like the one that asked for it


class JournalCall(RunDirModel):
    """A call about to be forwarded, and the worst case reserved for it."""

    schema_: Literal[1] = Field(JOURNAL_SCHEMA, alias="schema")
    kind: Literal["call"] = "call"
    seq: int
    reserved_usd: Decimal  # exact; serialised as a string
    model: str
    route: str


class JournalBlock(RunDirModel):
    """A durable allowance covering the reservations drawn from it."""

    schema_: Literal[1] = Field(JOURNAL_SCHEMA, alias="schema")
    kind: Literal["block"] = "block"
    usd: Decimal


JournalEntry = Annotated[JournalCall | JournalBlock, Field(discriminator="kind")]
_ENTRY: TypeAdapter[JournalCall | JournalBlock] = TypeAdapter(JournalEntry)


_UNESCAPED = json.JSONEncoder(ensure_ascii=False)  # made once: json.dumps makes one per call


def _json_text(value: str) -> str:
    # As pydantic writes a str: escapes for '"', '\\' and control characters, the rest as is.
    return _UNESCAPED.encode(str(value))


class JournalError(OSError):
    """The journal cannot be written: the call must not be forwarded."""


class ReservationJournal:
    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / JOURNAL_NAME
        run_dir.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._write_lock = threading.Lock()
        self._block_lock: asyncio.Lock | None = None
        self.journaled = Decimal(0)  # sum of durable blocks
        self.drawn = Decimal(0)  # sum of reservations drawn from them
        self._prefetch: asyncio.Task[None] | None = None
        self._error: BaseException | None = None

    def _append(self, entry: JournalCall | JournalBlock, sync: bool) -> None:
        self._write(entry.model_dump_json(by_alias=True), sync)

    def _write(self, line: str, sync: bool) -> None:
        with self._write_lock:
            if self._fd < 0:
                raise JournalError(f"the reservation journal {self.path} is closed")
            os.write(self._fd, line.encode() + b"\n")
            if sync:
                os.fsync(self._fd)

    async def cover(self, amount: Decimal) -> None:
        """Draw a call's reservation from the durable blocks; returns once a block covers it.

        Awaited before the call goes out: from then on a crash charges it (`recover_spend`)."""
        if self._error is not None:
            raise JournalError(f"the reservation journal failed: {self._error}")
        self.drawn += amount
        block = max(MIN_BLOCK, amount * BLOCK_CALLS)
        if self.drawn > self.journaled:
            await self._cover(self.drawn, block)
        elif self.journaled - self.drawn < block / 2 and (
            self._prefetch is None or self._prefetch.done()
        ):
            self._prefetch = asyncio.create_task(self._prefetch_block(self.drawn + block, block))

    def note_call(self, seq: int, amount: Decimal, model: str, route: str) -> None:
        """The `call` line of a covered call, which says which call drew what: written once the
        call has gone out (its money is already in a durable block), off the request's way in."""
        # The line `JournalCall(...).model_dump_json(by_alias=True)` writes (a test holds them
        # equal), formatted directly: every forwarded call writes one, on the proxy's event loop.
        line = (
            f'{{"schema":{JOURNAL_SCHEMA},"kind":"call","seq":{int(seq)},'
            f'"reserved_usd":"{Decimal(amount)}","model":{_json_text(model)},'
            f'"route":{_json_text(route)}}}'
        )
        self._write(line, sync=False)

    async def _cover(self, target: Decimal, block: Decimal) -> None:
        if self._block_lock is None:
            self._block_lock = asyncio.Lock()
        async with self._block_lock:
            if self.journaled >= target:
                return  # another call's block already covers this one
            size = target - self.journaled + block
            await asyncio.to_thread(self._append, JournalBlock(usd=size), True)
            self.journaled += size

    async def _prefetch_block(self, target: Decimal, block: Decimal) -> None:
        try:
            await self._cover(target, block)
        except OSError as e:
            self._error = e  # the next reserve() refuses: fail closed

    async def drain(self) -> None:
        if self._prefetch is not None:
            await asyncio.gather(self._prefetch, return_exceptions=True)

    def close(self) -> None:
        with self._write_lock:
            if self._fd >= 0:
                os.fsync(self._fd)
                os.close(self._fd)
                self._fd = -1


@dataclass
class RecoveredSpend:
    logged_usd: Decimal  # sum of the call log's costs
    unlogged_usd: Decimal  # reservations of calls that never reached the log
    logged_calls: int
    unlogged_calls: int

    @property
    def total_usd(self) -> Decimal:
        return self.logged_usd + self.unlogged_usd


def _lines(path: Path) -> list[dict[str, object]]:
    """Every whole JSON line of a file; a line torn by the crash is skipped."""
    out = []
    if path.exists():
        # "\n" only: `splitlines` also splits at U+2028 and the like, which JSON text may hold.
        for line in path.read_text(encoding="utf-8").split("\n"):
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return out


def read_journal(run_dir: Path) -> list[JournalCall | JournalBlock]:
    """The journal's entries, validated. A line torn by the crash (never valid JSON: every line
    is an object) is skipped; a whole line that is no entry is an error, never a guess at money."""
    entries = []
    path = run_dir / JOURNAL_NAME
    for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
        if not line:
            continue  # the end of the last line
        try:
            entries.append(_ENTRY.validate_json(line))
        except ValidationError as e:
            if any(error["type"] == "json_invalid" for error in e.errors()):
                continue
            raise RunDirError(
                f"{path}:{number}: not a reservation journal entry: {e.errors()[0]['msg']}",
                hint="settle this run with a harness that reads it, or without --run-dir",
            ) from None
    return entries


def recover_spend(run_dir: Path) -> RecoveredSpend:
    """A crashed run's spend from its files (see the module docstring)."""
    logged_cost: dict[int, Decimal] = {}
    logged_reserved = Decimal(0)
    for record in _lines(run_dir / "calls.jsonl"):
        seq = int(str(record["seq"]))
        logged_cost[seq] = Decimal(str(record.get("cost_usd", "0")))
        logged_reserved += Decimal(str(record.get("reserved_usd", "0")))
    unlogged_lines = Decimal(0)
    unlogged_calls = 0
    blocks = Decimal(0)
    for entry in read_journal(run_dir) if (run_dir / JOURNAL_NAME).exists() else []:
        if isinstance(entry, JournalBlock):
            blocks += entry.usd
        elif entry.seq not in logged_cost:
            unlogged_lines += entry.reserved_usd
            unlogged_calls += 1
    unlogged = max(unlogged_lines, blocks - logged_reserved, Decimal(0))
    return RecoveredSpend(
        logged_usd=sum(logged_cost.values(), Decimal(0)),
        unlogged_usd=unlogged,
        logged_calls=len(logged_cost),
        unlogged_calls=unlogged_calls,
    )
