"""One item of a coupled study (harness/study/coupling.py), run turn by turn across its arms.

Every arm's turn t runs before any arm's turn t+1, the arms of each turn in the item's order
(the study's leaders first, then the rest seeded per item), so a candidate's turn follows its
reference's turn directly (sharing the vendor's cache, and later its reply: reuse). The source
arm's turn context (its final seam message's `addon`) is handed to the arms after it in the same
turn, as their `addon` with `addon_from` set (the seam: a system prompt of the turn).

An infrastructure failure of one arm is retried on that arm alone, as for uncoupled studies: the arm
is restarted, a fresh session opened, and its earlier turns of the item run again with the very
inputs they had (the same handed turn contexts), before the failed turn; the other arms wait, so the
coupling holds: no arm's turn t+1 starts before every arm has run turn t. Resuming a coupled study
reruns an item in every arm unless every arm finished it (harness/run/stages/prepare.py).

The records go to turns.jsonl once the item is over, turn by turn in the order the arms ran, each
naming that order (`order`), the turn context it received (`addon_from`, `addon_sha256`) and the
one it returned (`addon_returned`, `addon_returned_sha256`).

A memory benchmark's item (harness/run/memory/memory_stage.py) is prepared on every arm, in the
item's order, before its question's first turn runs anywhere: each arm ingests the history session
by session at each session's date (or restores the snapshot of it another question took), and its
question's session is the one the history went into. So the question turn runs coupled like any
other (the reference first, its context handed, reuse and pins alike), each arm on its own store.
An arm whose preparation failed its retries, hit a bound or cannot ingest answers nothing; the
others go on. A snapshot that could not be copied fails the item in every arm (they would not have
read the same stores), as for uncoupled studies; each arm's question record (questions.jsonl) is
written with the turn records.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import httpx
import structlog

from arms.client import SeamClient, SeamError, TurnResult
from arms.seam import OpenSession, Turn
from harness.checks import memory_controls
from harness.isolation import InfraError
from harness.run.coupled_memory import unasked, voided
from harness.run.driver import Driver, halted_turn, strays_after_turn
from harness.run.memory import Prepared, SnapshotError
from harness.run.turns import BACKOFF_S, MAX_RETRIES, AttemptRecords
from harness.run.watch import StrayConnection
from harness.study import Coupling, Item, parity_for, turn_order
from rundir.turns import TurnRecord, addon_sha256

log = structlog.get_logger("harness.run.coupled")


# The most turn context an arm may return (UTF-8 bytes): a turn's system addition, not a
# conversation; an arm returning more fails its turn (outcome `error`) and hands nothing, so one
# arm cannot flood the others' prompts (and turns.jsonl) with its text.
MAX_ADDON_BYTES = 64 * 1024


@dataclass
class Lane:
    """One arm's part of the item: its current attempt, session and records by turn."""

    arm: str
    attempt: int = 1
    session_id: str = ""  # '' until opened (again, after a restart)
    next_turn: int = 0  # the first turn this attempt has not run yet
    ended: bool = False  # no later turn of the item runs on this arm (a bound, given up)
    records: dict[int, TurnRecord] = field(default_factory=dict)


class CoupledItem:
    def __init__(self, orchestrator: Driver, item: Item, coupling: Coupling) -> None:
        self.o = orchestrator
        self.item = item
        self.coupling = coupling
        arms = [arm for arm in orchestrator.arms if (item.id, arm) not in orchestrator.skip]
        seed = orchestrator.study.file.arm_order_seed
        self.order = turn_order(seed, item.id, arms, coupling.order)
        self.lanes = {arm: Lane(arm) for arm in self.order}
        self.handed: dict[int, tuple[str, str]] = {}  # turn -> (source arm, its turn context)

    async def run(self) -> None:
        try:
            if self.item.memory is not None:
                # Every arm's history first: a snapshot that fails on a later arm fails the
                # item everywhere, before any arm's question is asked (and paid for).
                for arm in self.order:
                    await self._guarded(self.lanes[arm], -1)
                if self.item.id in self.o.spoiled or self.o.stopping:
                    # No question is asked; a failed snapshot fails every arm's (_question).
                    for lane in self.lanes.values():
                        lane.ended = True
                    await self._finish()
                    return
            for number in range(len(self.item.turns)):
                if self.o.stopping and number:
                    break  # Ctrl-C: the item's remaining turns are not run (nor recorded)
                for arm in self.order:
                    lane = self.lanes[arm]
                    if not lane.ended:
                        await self._guarded(lane, number)
                    if arm == self.coupling.addon_from:
                        self._hand(lane, number)
        except StrayConnection:
            self._write()  # what ran, the halted turn included, is kept
            raise
        await self._finish()

    # --- one arm's turn, retried on a fresh arm ----------------------------------------------

    async def _guarded(self, lane: Lane, number: int) -> None:
        """Run `lane`'s turns up to `number` (after a restart: its earlier ones first)."""
        structlog.contextvars.bind_contextvars(item=self.item.id, arm=lane.arm)
        while True:
            try:
                if not lane.session_id:
                    await self._open(lane)
                while not lane.ended and lane.next_turn <= number:
                    await self._turn(lane, lane.next_turn)
                return
            except InfraError as e:
                self.o.tally.infra_failures += 1
                log.warning("infrastructure failure", attempt=lane.attempt, error=str(e))
                if lane.attempt > MAX_RETRIES or self.o.stopping:
                    self._give_up(lane, str(e))
                    if isinstance(e, SnapshotError) and self.item.memory is not None:
                        self.o.spoiled[self.item.id] = (
                            f"the item's snapshot failed on {lane.arm}: {e}"
                        )
                    return
                await asyncio.sleep(BACKOFF_S * 2 ** (lane.attempt - 1))
                lane.attempt += 1
                lane.session_id, lane.next_turn = "", 0
                await self.o.restart(lane.arm)

    def _give_up(self, lane: Lane, error: str) -> None:
        """The retries are spent: turns this attempt completed keep their outcome, the rest
        failed for want of an arm (the harness's failure, not the arm's)."""
        records = AttemptRecords(self.o.run_id, self.item.id, lane.arm, lane.attempt)
        for n in range(lane.next_turn, len(self.item.turns)):
            self._keep(lane, records.failed(n, "infra_failed", error))
        lane.ended = True

    async def _open(self, lane: Lane) -> None:
        item, arm = self.item, lane.arm
        session_id, opened_already = f"{item.id}.{lane.attempt}", False
        if item.memory is not None:
            # The history first (it pins each session's date, and may restart the arm on a copy).
            prepared = await self.o.memory.prepare(item, arm, lane.attempt)
            if not self._can_ask(lane, prepared):
                return
            session_id, opened_already = prepared.session_id, prepared.opened
        self.o.backend.pin_clock(arm, item.clock)  # a small file written: no wait
        lane.session_id = session_id
        if opened_already:
            return
        opened = OpenSession(
            session_id=lane.session_id,
            item_id=item.id,
            clock=item.clock,
            context=item.context,
            parity=parity_for(self.o.study.file.parity, arm),  # the study's engine parity
        )
        try:
            await self.o.clients[arm].open_session(opened)
        except (SeamError, httpx.HTTPError) as e:
            if await self.o.watch.machinery_failed(arm, e):
                raise InfraError(f"opening a session failed: {e}") from e
            records = AttemptRecords(self.o.run_id, item.id, arm, lane.attempt)
            for n in range(len(item.turns)):
                self._keep(lane, records.failed(n, "error", str(e)))
            lane.ended = True

    def _can_ask(self, lane: Lane, prepared: Prepared) -> bool:
        """Whether the arm's question may be asked once its history is in (coupled_memory.py)."""
        records = AttemptRecords(self.o.run_id, self.item.id, lane.arm, lane.attempt)
        kept = unasked(prepared, records, len(self.item.turns))
        if kept is None:
            return True
        for record in kept:
            self._keep(lane, record)
        if prepared.limited:
            self.o.limited.add(lane.arm)  # replaced once the item is over
        lane.ended = True
        return False

    def _addon_for(self, arm: str, number: int) -> tuple[str, str | None]:
        """The turn's addon for `arm`: the source's turn context if the source ran before it in
        this turn and returned one, else the item's scripted addon."""
        handed = self.handed.get(number)
        if handed is not None and self.order.index(arm) > self.order.index(handed[0]):
            return handed[1], handed[0]
        return self.item.turns[number].addon, None

    async def _turn(self, lane: Lane, number: int) -> None:
        o, item, arm = self.o, self.item, lane.arm
        records = AttemptRecords(o.run_id, item.id, arm, lane.attempt)
        await o.tell_proxy(arm, item.id, number)
        addon, source = self._addon_for(arm, number)
        turn = Turn(
            turn=number,
            user=item.turns[number].user,
            addon=addon,
            addon_from=source,
            deadline_ms=o.study.deadline_ms,
            clock=item.clock,
        )
        o.strays.turn_starts(arm, item.id, number)
        client: SeamClient = o.clients[arm]
        try:
            result = await o.watch.collect(arm, client, lane.session_id, turn, o.deadline_s)
        except StrayConnection as stray:
            self._keep(lane, halted_turn(o, arm, records, number, stray))
            raise
        except (SeamError, httpx.HTTPError, InfraError) as e:
            if await self._bound(lane, records, number):
                return
            if isinstance(e, InfraError):
                raise
            if await o.watch.machinery_failed(arm, e):
                raise InfraError(f"turn {number}: {e}") from e
            self._keep(lane, records.failed(number, "error", str(e)))
            return
        broken = result.outcome == "broken"
        if broken and await self._bound(lane, records, number):
            return
        if broken and await o.watch.machinery_failed(arm, None):
            raise InfraError(f"turn {number}: the arm's process died ({result.error})")
        record = records.answered(number, result)
        if result.addon is not None:
            size = len(result.addon.encode("utf-8"))
            if size > MAX_ADDON_BYTES:
                record.outcome = "error"
                record.error = (
                    f"the arm returned a turn context of {size} bytes, over the "
                    f"{MAX_ADDON_BYTES // 1024} KiB cap: not recorded, not handed on"
                )
            else:
                record.addon_returned = result.addon
                record.addon_returned_sha256 = addon_sha256(result.addon)
        try:
            await strays_after_turn(o, record)
        except StrayConnection:
            self._keep(lane, record)
            raise
        if await self._bound(lane, records, number, result, record.stray_connections):
            return
        self._keep(lane, record)

    async def _bound(
        self,
        lane: Lane,
        records: AttemptRecords,
        number: int,
        result: TurnResult | None = None,
        strays: int = 0,
    ) -> bool:
        """The arm met a bound in this turn: this turn and its later ones are `resource_limit`."""
        limited: list[TurnRecord] = []
        turns = len(self.item.turns)
        if not await self.o.met_bound(lane.arm, records, number, turns, limited, result, strays):
            return False
        for record in limited:
            self._keep(lane, record)
        lane.ended = True
        return True

    def _keep(self, lane: Lane, record: TurnRecord) -> None:
        record.order = list(self.order)
        addon, source = self._addon_for(lane.arm, record.turn)
        if source is not None:
            record.addon_from, record.addon_sha256 = source, addon_sha256(addon)
        lane.records[record.turn] = record
        lane.next_turn = record.turn + 1

    def _hand(self, lane: Lane, number: int) -> None:
        """The source's turn context of turn `number`, for the arms after it: only from a turn
        it finished (a cut or failed turn hands nothing; the later arms get the script's)."""
        record = lane.records.get(number)
        if record is not None and record.outcome == "done" and record.addon_returned is not None:
            self.handed[number] = (lane.arm, record.addon_returned)

    # --- the end of the item -----------------------------------------------------------------

    async def _finish(self) -> None:
        unreachable: InfraError | None = None
        for lane in self.lanes.values():
            if lane.session_id:
                try:
                    await self.o.clients[lane.arm].close_session(lane.session_id)
                except (SeamError, httpx.HTTPError) as e:
                    log.debug("closing the session failed", error=str(e))
            # The arm is between turns: the proxy answers once it logged every call that ended
            # before, so the memory controls below see them all.
            try:
                await self.o.tell_proxy(lane.arm, None, 0)
            except InfraError as e:
                unreachable = e  # raised once the item's records are kept
            done = [lane.records[n] for n in sorted(lane.records)]
            if done:
                await asyncio.to_thread(
                    memory_controls.check, self.o.turns.path.parent, self.item, done
                )
            if self.item.memory is not None:
                self._question(lane)
            if lane.arm in self.o.limited:  # a fork bomb's leftovers must not slow the next arm
                self.o.limited.discard(lane.arm)
                await self.o.restart(lane.arm)
        self._write()
        structlog.contextvars.unbind_contextvars("item", "arm")
        if unreachable is not None:
            raise unreachable

    def _question(self, lane: Lane) -> None:
        """The arm's question record, with what ingesting its history took (coupled_memory.py:
        void if the item's snapshot failed on any arm)."""
        ingested, snapshot_sha256 = self.o.memory.account(self.item, lane.arm)
        records = AttemptRecords(self.o.run_id, self.item.id, lane.arm, lane.attempt)
        spoiled = self.o.spoiled.get(self.item.id)
        done = voided(lane.records, records, len(self.item.turns), spoiled)
        for record in done:
            record.order = list(self.order)
        lane.records = {record.turn: record for record in done}
        if done:
            self.o.questions.record(self.item, lane.arm, done, ingested, snapshot_sha256)

    def _write(self) -> None:
        """Turn by turn, each turn's records in the order its arms ran."""
        for number in range(len(self.item.turns)):
            for arm in self.order:
                record = self.lanes[arm].records.get(number)
                if record is not None:
                    self.o.write(record)
