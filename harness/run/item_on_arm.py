"""One item on one arm, as an uncoupled study runs it (the orchestrator runs its arms one after
another; a coupled study runs an item turn by turn across arms instead: coupled_item.py).

An attempt opens a fresh session (a memory question's history ingested first:
harness/run/memory/memory_stage.py) and runs the item's turns in order, each under the same wall
deadline at the seam, with the arm's clock pinned to the item's date. A failure of the machinery
(the arm's process died, its seam refused the connection) is retried from the item's first turn on a
fresh arm, up to MAX_RETRIES times (harness/run/turns/retries.py), and counted apart from the arm's
own failures (cut, error). A running turn is watched (harness/run/watch/turn_watch.py): with the
study's `on_stray = "halt"` the first stray connection cuts it, records it `stray_connection` and
stops the run (StrayConnection).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Protocol

import httpx
import structlog

from arms.client import SeamClient, SeamError
from arms.seam import OpenSession, Turn
from harness.checks import memory_controls
from harness.isolation import InfraError
from harness.run.driver import Driver, halted_turn, strays_after_turn
from harness.run.memory import MemoryStage, Prepared, SnapshotError
from harness.run.turns import BACKOFF_S, MAX_RETRIES, AttemptRecords
from harness.run.watch import StrayConnection
from harness.study import Item, TurnScript, parity_for
from rundir.turns import IngestionRecord, TurnRecord

log = structlog.get_logger("harness.run.orchestrator")


@dataclass(frozen=True)
class Held:
    """A memory question's records on one arm, written once every arm has run the item: a
    snapshot that fails on a later arm voids the earlier arms' answers too."""

    arm: str
    done: list[TurnRecord]
    ingested: list[IngestionRecord]
    snapshot_sha256: str | None


class ArmDriver(Driver, Protocol):
    """What one item on one arm uses of the orchestrator beyond what a coupled item does: the
    memory stage, the items whose snapshot failed, and the memory questions' held records."""

    memory: MemoryStage
    spoiled: dict[str, str]
    held: list[Held]


class ItemOnArm:
    def __init__(self, orchestrator: ArmDriver, item: Item, arm: str) -> None:
        self.o = orchestrator
        self.item = item
        self.arm = arm

    async def run(self) -> None:
        """Attempts until one is not the machinery's failure, then the item's records kept (a
        memory question's held until every arm ran it)."""
        structlog.contextvars.bind_contextvars(item=self.item.id, arm=self.arm)
        done = await self._attempts()
        if self.arm in self.o.limited:  # a fork bomb's leftovers must not slow the next arm
            self.o.limited.discard(self.arm)
            await self.o.restart(self.arm)
        await self._keep(done)
        structlog.contextvars.unbind_contextvars("item", "arm")

    async def _attempts(self) -> list[TurnRecord]:
        item, arm, attempt = self.item, self.arm, 1
        while True:
            done: list[TurnRecord] = []
            spoiled = self.o.spoiled.get(item.id)
            if spoiled is not None:  # another arm's snapshot failed: this arm does not run it
                records = AttemptRecords(self.o.run_id, item.id, arm, attempt)
                return done + records.given_up(done, len(item.turns), spoiled)
            try:
                await self._attempt(attempt, done)
                return done
            except StrayConnection:
                for record in done:  # what ran, the halted turn included, is kept
                    self.o.write(record)
                raise
            except InfraError as e:
                self.o.tally.infra_failures += 1
                log.warning("infrastructure failure", attempt=attempt, error=str(e))
                if attempt > MAX_RETRIES or self.o.stopping:
                    records = AttemptRecords(self.o.run_id, item.id, arm, attempt)
                    done += records.given_up(done, len(item.turns), str(e))
                    if isinstance(e, SnapshotError) and item.memory is not None:
                        self.o.spoiled[item.id] = f"the item's snapshot failed on {arm}: {e}"
                    return done
                await asyncio.sleep(BACKOFF_S * 2 ** (attempt - 1))
                attempt += 1
                await self.o.restart(arm)

    async def _keep(self, done: list[TurnRecord]) -> None:
        # The arm is between turns. The proxy answers this only once it has logged every call
        # that ended before (a stream's record follows its end: proxy/flow/after_reply.py), so
        # the memory controls, which read the calls of this item's turns, see them all.
        unreachable: InfraError | None = None
        try:
            await self.o.tell_proxy(self.arm, None, 0)
        except InfraError as e:
            unreachable = e  # raised once the item's records are kept
        item = self.item
        await asyncio.to_thread(memory_controls.check, self.o.turns.path.parent, item, done)
        if item.memory is not None:  # recorded after the proxy logged the item's calls (above)
            self.o.held.append(Held(self.arm, done, *self.o.memory.account(item, self.arm)))
        for record in done if item.memory is None else []:
            self.o.write(record)
        if unreachable is not None:
            raise unreachable

    async def _attempt(self, attempt: int, done: list[TurnRecord]) -> None:
        """Run the item's turns on the arm; records go to `done`. Raises InfraError."""
        records = AttemptRecords(self.o.run_id, self.item.id, self.arm, attempt)
        session_id = await self._open(attempt, records, done)
        if session_id is None:
            return
        client = self.o.clients[self.arm]  # after the history: a fresh arm has a new client
        for number, script in enumerate(self.item.turns):
            if self.o.stopping and number:
                break  # Ctrl-C: this item's remaining turns are not run (and not recorded)
            if not await self._turn(client, session_id, number, script, records, done):
                return
        try:
            await client.close_session(session_id)
        except (SeamError, httpx.HTTPError) as e:
            log.debug("closing the session failed", error=str(e))

    async def _open(
        self, attempt: int, records: AttemptRecords, done: list[TurnRecord]
    ) -> str | None:
        """The attempt's session, opened (after a memory question's history), or None when the
        attempt ends before its first turn (its records, if any, in `done`)."""
        item, arm, turns = self.item, self.arm, len(self.item.turns)
        # A memory benchmark's question: its history first (harness/run/memory/memory_stage.py).
        prepared = await self.o.memory.prepare(item, arm, attempt) if item.memory else None
        if prepared is not None and (ended := self._not_asked(prepared, records)) is not None:
            done += ended
            return None
        # A small file written, no wait (harness/isolation/clock.py): on the loop.
        self.o.backend.pin_clock(arm, item.clock)
        session_id = prepared.session_id if prepared else f"{item.id}.{attempt}"
        opened = OpenSession(
            session_id=session_id,
            item_id=item.id,
            clock=item.clock,
            context=item.context,
            parity=parity_for(self.o.study.file.parity, arm),  # the study's engine parity
        )
        try:
            if prepared is None or not prepared.opened:
                await self.o.clients[arm].open_session(opened)
        except (SeamError, httpx.HTTPError) as e:
            if await self.o.watch.machinery_failed(arm, e):
                raise InfraError(f"opening a session failed: {e}") from e
            done += [records.failed(n, "error", str(e)) for n in range(turns)]
            return None
        return session_id

    def _not_asked(self, prepared: Prepared, records: AttemptRecords) -> list[TurnRecord] | None:
        """The records of a memory question whose history did not go in (none when Ctrl-C
        stopped its ingestion: the question is left for --resume); None if it is asked."""
        turns = range(len(self.item.turns))
        if prepared.stopped:
            return []
        if prepared.limited:  # a bound met while ingesting
            why = f"not run: {prepared.limited} while ingesting the history"
            self.o.limited.add(self.arm)  # replaced before anything else runs
            return [records.failed(n, "resource_limit", why) for n in turns]
        if prepared.failed:
            return [records.failed(n, "error", prepared.failed) for n in turns]
        return None

    async def _turn(
        self,
        client: SeamClient,
        session_id: str,
        number: int,
        script: TurnScript,
        records: AttemptRecords,
        done: list[TurnRecord],
    ) -> bool:
        """Run turn `number`, its record into `done`; False when the attempt ends here (the arm
        met a bound). Raises InfraError (the machinery failed) or StrayConnection (halt)."""
        o, arm, turns = self.o, self.arm, len(self.item.turns)
        await o.tell_proxy(arm, self.item.id, number)
        turn = Turn(
            turn=number,
            user=script.user,
            addon=script.addon,
            deadline_ms=o.study.deadline_ms,
            clock=self.item.clock,
        )
        o.strays.turn_starts(arm, self.item.id, number)
        try:
            result = await o.watch.collect(arm, client, session_id, turn, o.deadline_s)
        except StrayConnection as stray:
            done.append(halted_turn(o, arm, records, number, stray))
            raise
        except (SeamError, httpx.HTTPError, InfraError) as e:
            # An arm that died of its own bound (OOM-killed) failed: no retry on a fresh arm.
            if await o.met_bound(arm, records, number, turns, done):
                return False
            if isinstance(e, InfraError):
                raise
            if await o.watch.machinery_failed(arm, e):
                raise InfraError(f"turn {number}: {e}") from e
            done.append(records.failed(number, "error", str(e)))
            return True
        # A stream broken by the arm's death of its own bound (OOM-killed) is not a failure of
        # the machinery to retry.
        broken = result.outcome == "broken"
        if broken and await o.met_bound(arm, records, number, turns, done):
            return False
        if broken and await o.watch.machinery_failed(arm, None):
            raise InfraError(f"turn {number}: the arm's process died ({result.error})")
        record = records.answered(number, result)
        try:
            await strays_after_turn(o, record)
        except StrayConnection:
            done.append(record)
            raise
        # After the strays: a halt outranks a bound, and its entries are charged to this turn.
        strays = record.stray_connections
        if await o.met_bound(arm, records, number, turns, done, result, strays):
            return False
        done.append(record)
        return True
