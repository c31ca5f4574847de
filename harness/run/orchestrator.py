"""The orchestrator: drive every item's scripted turns through every arm, alike.

Per item the arms run one after another in a seeded order (no arm always goes first, and the
order is reproducible; a coupled study runs its items turn by turn across arms instead:
coupled_item.py), each from a fresh session, each turn under the same wall deadline at the
seam, with the arm's clock pinned to the item's date. Before each turn the proxy is told which
arm, item and turn is running (proxy_control.py), so every call is attributed. A failure of the
machinery (the arm's process died, its seam refused the connection) is retried from the item's
first turn on a fresh arm, up to MAX_RETRIES times, and counted apart from the arm's own
failures (cut, error).

A running turn is watched (turn_watch.py): its arm still alive, and every refused connection
(any arm's, from any source: guard, proxy, kernel log) seen as it happens (stray_watch.py). With
the study's `on_stray = "halt"` (the default) the first one stops the run at once: the turn in
flight is cut and recorded as `stray_connection`, no later turn runs, and StrayConnection names
the arm and the destination. With `"fail"` the run goes on and fails at its end. Ctrl-C:
signals.py.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import nullcontext
from dataclasses import dataclass

import httpx
import structlog

from arms.client import SeamClient, SeamError, TurnResult
from arms.seam import OpenSession, Turn
from harness.checks import memory_controls
from harness.datasets.source import ItemsSource
from harness.guard import run_guard
from harness.isolation.base import InfraError, IsolationBackend, ProxyInfo
from harness.isolation.seam_http import seam_client
from harness.parity import parity_for
from harness.run.control.guard_route import guard_route
from harness.run.control.probe_route import probe_env
from harness.run.coupled_item import CoupledItem
from harness.run.memory.net_score import DEFAULT_LAMBDA
from harness.run.memory.question_records import QuestionRecorder
from harness.run.memory.snapshot import SnapshotError
from harness.run.memory_stage import MemoryStage, state_env
from harness.run.proxy_control import ProxyControl
from harness.run.rtt import live_upstreams, probe_all
from harness.run.turns.limit_check import describe, limit_records
from harness.run.turns.retries import BACKOFF_S, MAX_RETRIES
from harness.run.turns.signals import CtrlC
from harness.run.turns.tally import RunTally
from harness.run.turns.turn_records import AttemptRecords
from harness.run.watch.model_identity import ModelIdentityWatch
from harness.run.watch.stray_watch import StrayConnection, StrayWatch, strongest
from harness.run.watch.turn_watch import TurnWatch
from harness.study import Item, Study
from rundir.instances import join
from rundir.network.rtt import ProbePhase, RttLog
from rundir.turns.ingestions import IngestionRecord
from rundir.turns.turns import TurnLog, TurnRecord

log = structlog.get_logger("harness.run.orchestrator")


def arm_order(seed: int, item_id: str, arms: Sequence[str]) -> list[str]:
    """The order the arms run an item in: differs across items, identical for the same seed.

    random.Random seeded with a str hashes it with SHA-512, so the order does not depend on
    PYTHONHASHSEED or the platform.
    """
    order = list(arms)
    random.Random(f"{seed}:{item_id}").shuffle(order)
    return order


@dataclass(frozen=True)
class Held:
    """A memory question's records on one arm, written once every arm has run the item: a
    snapshot that fails on a later arm voids the earlier arms' answers too."""

    arm: str
    done: list[TurnRecord]
    ingested: list[IngestionRecord]
    snapshot_sha256: str | None


class Orchestrator:
    def __init__(
        self,
        study: Study,
        arms: list[str],
        items: list[Item],
        backend: IsolationBackend,
        run_id: str,
        turns: TurnLog,
        on_turn: Callable[[TurnRecord], None] | None = None,
        skip: frozenset[tuple[str, str]] = frozenset(),
        tally: RunTally | None = None,
        hand_out: Iterator[Item] | None = None,
        worker: int = 0,
    ) -> None:
        self.study = study
        self.arms = arms
        self.items = items
        self.backend = backend
        self.run_id = run_id
        self.turns = turns
        self.on_turn = on_turn or (lambda record: None)
        self.skip = skip  # (item, arm) pairs a resumed run already finished
        # --workers N (harness/run/workers.py): one tally for all workers, and the items handed
        # out from one iterator in the study's order, each to the first worker that is free.
        self.tally = tally if tally is not None else RunTally()
        self.hand_out = hand_out
        self.worker = worker  # --workers: this worker's index (its arms' instance names)
        self.proxy_bases: dict[str, str] = {}  # instance -> its proxy listener (for [guard])
        self.owns_signals = True  # one worker takes Ctrl-C; the others share its CtrlC
        self.clients: dict[str, SeamClient] = {}
        self.control: ProxyControl | None = None
        self.deadline_s = study.deadline_ms / 1000
        run_dir = turns.path.parent
        halt = study.file.on_stray == "halt"
        # With the tally's set: the run's final egress read names what no look saw (teardown).
        self.strays = StrayWatch(backend, run_id, run_dir, self.tally.seen_strays, halt, worker)
        self.watch = TurnWatch(backend, self.strays)
        self.ctrl_c = CtrlC(on_stop=self._interrupted)
        self.seam_urls: dict[str, str] = {}  # arm -> its seam, for the round-trip probes
        self.rtt = RttLog(run_dir / "rtt.jsonl")
        self.identity = ModelIdentityWatch(run_dir / "calls.jsonl")
        self.upstreams = live_upstreams(run_dir, dict(study.file.vendors))
        self.has_memory = any(item.memory is not None for item in items)
        source = study.file.items
        net_lambda = source.net_lambda if isinstance(source, ItemsSource) else DEFAULT_LAMBDA
        self.questions = QuestionRecorder(run_id, run_dir, net_lambda)
        self.memory = MemoryStage(
            run_id,
            run_dir,
            backend,
            turns,
            self.clients,
            self.seam_urls,
            study.file.ingest_deadline_ms,
            worker,
        )
        self.memory.parity = study.file.parity  # ingestion sessions open under it too
        self.limited: set[str] = set()  # arms that met a bound: replaced before anything else
        # A memory item whose snapshot could not be copied, on any arm, is an infrastructure
        # failure in every arm (its arms would not have read the same store): item -> why.
        self.spoiled: dict[str, str] = {}
        self.held: list[Held] = []  # the current item's records, until all its arms ran

    @property
    def stopping(self) -> bool:
        """Ctrl-C was pressed: the turn in flight settles, then the run stops."""
        return self.ctrl_c.stopping

    # --- the run ---------------------------------------------------------------------------

    async def run(self, proxy: ProxyInfo) -> RunTally:
        """Start the arms, run every item, and always stop the clients (the caller stops the
        backend). Ctrl-C: the turn in flight settles, then the run stops; twice: at once."""
        self.control = ProxyControl(proxy.control_url, self.worker)
        self.proxy_bases = proxy.arm_bases  # the [guard] calls the model through its arm's
        self.memory.control = self.control
        self.memory.stopping = lambda: self.stopping
        try:
            with self.ctrl_c.handled() if self.owns_signals else nullcontext():
                await self._start_arms(proxy)
                await self._probe("start")  # before any arm's first turn
                coupling = self.study.file.coupling
                for item in self.hand_out if self.hand_out is not None else self.items:
                    if coupling is not None:  # turn by turn across arms (coupled_item.py)
                        if self.stopping:
                            self.tally.interrupted = True
                            return self.tally
                        await CoupledItem(self, item, coupling).run()
                        continue
                    try:
                        for arm in arm_order(self.study.file.arm_order_seed, item.id, self.arms):
                            if (item.id, arm) in self.skip:
                                continue
                            if self.stopping:
                                self.tally.interrupted = True
                                return self.tally
                            await self._item_on_arm(item, arm)
                    finally:
                        self._settle(item)
                await self._probe("end")  # after every arm's last turn, before they stop
        finally:
            for client in self.clients.values():
                await client.aclose()
            await self.control.aclose()
            self.questions.close()
        return self.tally

    async def _start_arms(self, proxy: ProxyInfo) -> None:
        # The day's probe decision (probe.json), for an arm that reaches Anthropic over the
        # compatibility route; read before any arm starts, so a damaged file starts none.
        probe = probe_env(self.turns.path.parent, self.study.path)
        # One at a time: on a small machine, arms starting together would time each other.
        for name in self.arms:
            # The study's capabilities join the arm's own: the backend sees one list.
            spec = self.study.arms[name].model_copy(
                update={"cap_add": self.study.capabilities(name)}
            )
            if self.has_memory:  # the folder a v2 arm keeps its memory in, for snapshots
                # This worker's copy's folder (`logs/A@k/state`): no two copies share a store.
                state = state_env(self.backend, self.turns.path.parent, join(name, self.worker))
                spec = spec.model_copy(update={"env": spec.env | state})
            if probe:
                spec = spec.model_copy(update={"env": spec.env | probe})
            handle = await self.backend.start_arm(name, spec, proxy)
            self.clients[name] = seam_client(handle.seam_url)
            self.seam_urls[name] = handle.seam_url
            if self.has_memory:
                await self.memory.learn(name)
            log.info("arm ready", arm=name, seam=handle.seam_url)
            await self.strays.halt_if_new("start-up")  # an arm that reached out while starting

    async def _item_on_arm(self, item: Item, arm: str) -> None:
        structlog.contextvars.bind_contextvars(item=item.id, arm=arm)
        attempt = 1
        while True:
            done: list[TurnRecord] = []
            spoiled = self.spoiled.get(item.id)
            if spoiled is not None:  # another arm's snapshot failed: this arm does not run it
                records = AttemptRecords(self.run_id, item.id, arm, attempt)
                done += records.given_up(done, len(item.turns), spoiled)
                break
            try:
                await self._attempt(item, arm, attempt, done)
                break
            except StrayConnection:
                for record in done:  # what ran, the halted turn included, is kept
                    self._write(record)
                raise
            except InfraError as e:
                self.tally.infra_failures += 1
                log.warning("infrastructure failure", attempt=attempt, error=str(e))
                if attempt > MAX_RETRIES or self.stopping:
                    records = AttemptRecords(self.run_id, item.id, arm, attempt)
                    done += records.given_up(done, len(item.turns), str(e))
                    if isinstance(e, SnapshotError) and item.memory is not None:
                        self.spoiled[item.id] = f"the item's snapshot failed on {arm}: {e}"
                    break
                await asyncio.sleep(BACKOFF_S * 2 ** (attempt - 1))
                attempt += 1
                await self._restart(arm)
        if arm in self.limited:  # a fork bomb's leftovers must not slow the next arm
            self.limited.discard(arm)
            await self._restart(arm)
        # The arm is between turns. The proxy answers this only once it has logged every call
        # that ended before (a stream's record follows its end: proxy/after_reply.py), so the
        # memory controls, which read the calls of this item's turns, see them all.
        unreachable: InfraError | None = None
        try:
            await self._tell_proxy(arm, None, 0)
        except InfraError as e:
            unreachable = e  # raised once the item's records are kept
        await asyncio.to_thread(memory_controls.check, self.turns.path.parent, item, done)
        if item.memory is not None:  # recorded after the proxy logged the item's calls (above)
            self.held.append(Held(arm, done, *self.memory.account(item, arm)))
        for record in done if item.memory is None else []:
            self._write(record)
        if unreachable is not None:
            raise unreachable
        structlog.contextvars.unbind_contextvars("item", "arm")

    async def _restart(self, arm: str) -> None:
        try:
            handle = await self.backend.restart_arm(arm)
        except InfraError as restart_error:
            log.warning("arm restart failed", error=str(restart_error))
            return  # the next attempt fails fast and is counted
        await self.clients[arm].aclose()
        self.clients[arm] = seam_client(handle.seam_url)
        self.seam_urls[arm] = handle.seam_url

    async def _attempt(self, item: Item, arm: str, attempt: int, done: list[TurnRecord]) -> None:
        """Run the item's turns on `arm`; records go to `done`. Raises InfraError."""
        records = AttemptRecords(self.run_id, item.id, arm, attempt)
        # A memory benchmark's question: its history first (harness/run/memory_stage.py).
        prepared = await self.memory.prepare(item, arm, attempt) if item.memory else None
        if prepared is not None and prepared.stopped:
            return  # Ctrl-C during the history's ingestion: the question is left for --resume
        if prepared is not None and prepared.limited:  # a bound met while ingesting
            why = f"not run: {prepared.limited} while ingesting the history"
            done += [records.failed(n, "resource_limit", why) for n in range(len(item.turns))]
            self.limited.add(arm)  # replaced before anything else runs
            return
        if prepared is not None and prepared.failed:
            done += [records.failed(n, "error", prepared.failed) for n in range(len(item.turns))]
            return
        client = self.clients[arm]  # after prepare: a fresh arm on its copy has a new client
        # A small file written, no wait (harness/isolation/clock.py): on the loop.
        self.backend.pin_clock(arm, item.clock)
        session_id = prepared.session_id if prepared else f"{item.id}.{attempt}"
        opened = OpenSession(
            session_id=session_id,
            item_id=item.id,
            clock=item.clock,
            context=item.context,
            parity=parity_for(self.study.file.parity, arm),  # the study's engine parity
        )
        try:
            if prepared is None or not prepared.opened:
                await client.open_session(opened)
        except (SeamError, httpx.HTTPError) as e:
            if await self.watch.machinery_failed(arm, e):
                raise InfraError(f"opening a session failed: {e}") from e
            done += [records.failed(n, "error", str(e)) for n in range(len(item.turns))]
            return
        for number, script in enumerate(item.turns):
            if self.stopping and number:
                break  # Ctrl-C: this item's remaining turns are not run (and not recorded)
            await self._tell_proxy(arm, item.id, number)
            turn = Turn(
                turn=number,
                user=script.user,
                addon=script.addon,
                deadline_ms=self.study.deadline_ms,
                clock=item.clock,
            )
            self.strays.turn_starts(arm, item.id, number)
            try:
                result = await self.watch.collect(arm, client, session_id, turn, self.deadline_s)
            except StrayConnection as stray:
                error = f"run halted: {stray}"
                if stray.result is not None:  # it ended within the grace: its answer is kept
                    record = records.answered(number, stray.result)
                    record.outcome, record.error = "stray_connection", error
                else:
                    record = records.failed(number, "stray_connection", error)
                record.stray_connections = self.strays.this_turn[arm]
                done.append(record)
                raise
            except (SeamError, httpx.HTTPError, InfraError) as e:
                # An arm that died of its own bound (OOM-killed) failed: no retry on a fresh arm.
                if await self._met_bound(arm, records, number, len(item.turns), done):
                    return
                if isinstance(e, InfraError):
                    raise
                if await self.watch.machinery_failed(arm, e):
                    raise InfraError(f"turn {number}: {e}") from e
                done.append(records.failed(number, "error", str(e)))
                continue
            # A stream broken by the arm's death of its own bound (OOM-killed) is not a failure
            # of the machinery to retry.
            broken = result.outcome == "broken"
            if broken and await self._met_bound(arm, records, number, len(item.turns), done):
                return
            if broken and await self.watch.machinery_failed(arm, None):
                raise InfraError(f"turn {number}: the arm's process died ({result.error})")
            record = records.answered(number, result)
            # Later strays are its teardown's; per worker's copy (strays.at_teardown).
            self.tally.last_turn_end[join(arm, self.worker)] = time.time()
            new = await self.strays.new(f"{arm} {item.id} turn {number}")
            self.strays.turn_ended()
            record.stray_connections = self.strays.this_turn[arm]
            if new and self.strays.halt:
                # The turn ended before the watch saw it: its answer is kept, its outcome says
                # why the run stopped.
                halt = StrayConnection(strongest(new))
                record.outcome, record.error = "stray_connection", f"run halted: {halt}"
                done.append(record)
                raise halt
            # After the strays: a halt outranks a bound, and its entries are charged to this turn.
            strays = record.stray_connections
            if await self._met_bound(arm, records, number, len(item.turns), done, result, strays):
                return
            done.append(record)
        try:
            await client.close_session(session_id)
        except (SeamError, httpx.HTTPError) as e:
            log.debug("closing the session failed", error=str(e))

    async def _met_bound(
        self,
        arm: str,
        records: AttemptRecords,
        number: int,
        turns: int,
        done: list[TurnRecord],
        result: TurnResult | None = None,
        strays: int = 0,
    ) -> bool:
        """Whether `arm` met one of its bounds in this turn: if so, this turn and the item's
        later ones are recorded `resource_limit` and the arm is replaced before the next."""
        met = await asyncio.to_thread(self.backend.limit_hits, arm)
        if not met:
            return False
        why = describe(arm, met, self.backend.limits)
        log.warning("resource limit", limit=met, error=why)
        limited = limit_records(records, number, turns, why, result)
        limited[0].stray_connections = strays
        done += limited
        self.limited.add(arm)
        return True

    async def _probe(self, phase: ProbePhase) -> None:
        if self.worker:  # --workers: worker 0's arms alone, so rtt.jsonl has N=1's lines
            return
        await probe_all(self.rtt, self.run_id, self.seam_urls, self.upstreams, phase)

    async def _tell_proxy(self, arm: str, item: str | None, turn: int) -> None:
        assert self.control is not None
        await self.control.tell(arm, item, turn)

    def _settle(self, item: Item) -> None:
        """Write the memory question's records of every arm that ran it: each an infrastructure
        failure if any arm's snapshot of its history failed."""
        held, self.held = self.held, []
        why = self.spoiled.get(item.id)
        for kept in held:
            done = kept.done
            if why is not None and done:
                records = AttemptRecords(self.run_id, item.id, kept.arm, done[0].attempts)
                done = records.given_up([], len(item.turns), why)
            if done:
                self.questions.record(item, kept.arm, done, kept.ingested, kept.snapshot_sha256)
            for record in done:
                self._write(record)

    def _write(self, record: TurnRecord) -> None:
        record = self.identity.check(record)  # a main call served by an unpinned model fails it
        guard = self.study.file.guard
        if guard is not None and record.text:
            # Every arm's final text by the same rule (harness/guard.py); a verdict beside the
            # outcome. Run here, where every answer's record passes once, in order. The proxy
            # books the arm's listener's calls meanwhile as purpose guard (phase "guard").
            if self.control is not None:
                self.control.guard(record.arm, record.item, record.turn)
            try:
                found = run_guard(
                    guard, self.study.path.parent, record.text, record.arm, record.item,
                    record.turn, guard_route(
                        self.proxy_bases.get(join(record.arm, self.worker)),
                        self.turns.path.parent / "egress" / "guard" / "egress.jsonl",
                    ),
                )  # fmt: skip
            finally:
                if self.control is not None:
                    self.control.guard(record.arm, None, record.turn)
            record.guard, record.guard_reason = found.verdict, found.reason
        self.turns.append(record)
        self.tally.outcomes[record.outcome] += 1
        self.on_turn(record)

    def _interrupted(self) -> None:
        self.tally.interrupted = True
