"""The orchestrator: drive every item's scripted turns through every arm, alike.

It starts the arms (one at a time, each once the proxy listens), hands out the items and runs
each on its arms: one arm after another in a seeded order (no arm always goes first, and the
order is reproducible), each from a fresh session (harness/run/item_on_arm.py); a coupled study
runs its items turn by turn across arms instead (harness/run/coupled_item.py). Before each turn
the proxy is told which arm, item and turn is running (harness/run/control/proxy_control.py), so
every call is attributed. Every record passes through here once, in order, on its way to
turns.jsonl: the model's identity checked and the study's guard run on its text.

A running turn is watched (harness/run/watch/turn_watch.py): its arm still alive, and every
refused connection (any arm's, from any source: guard, proxy, kernel log) seen as it happens
(harness/run/watch/stray_watch.py). With the study's `on_stray = "halt"` (the default) the first
one stops the run at once: the turn in flight is cut and recorded as `stray_connection`, no later
turn runs, and StrayConnection names the arm and the destination. With `"fail"` the run goes on
and fails at its end. Ctrl-C: harness/run/turns/signals.py.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Iterator, Sequence
from contextlib import nullcontext

import structlog

from arms.client import SeamClient, TurnResult
from harness.datasets import ItemsSource
from harness.guard import run_guard
from harness.isolation import InfraError, IsolationBackend, ProxyInfo, seam_client
from harness.run.control import ProxyControl, guard_route, live_upstreams, probe_all, probe_env
from harness.run.coupled_item import CoupledItem
from harness.run.item_on_arm import Held, ItemOnArm
from harness.run.memory import DEFAULT_LAMBDA, MemoryStage, QuestionRecorder, state_env
from harness.run.turns import AttemptRecords, CtrlC, RunTally, describe, limit_records
from harness.run.watch import ModelIdentityWatch, StrayWatch, TurnWatch
from harness.study import Item, Study
from rundir.instances import join
from rundir.network import ProbePhase, RttLog
from rundir.turns import TurnLog, TurnRecord

log = structlog.get_logger("harness.run.orchestrator")


def arm_order(seed: int, item_id: str, arms: Sequence[str]) -> list[str]:
    """The order the arms run an item in: differs across items, identical for the same seed.

    random.Random seeded with a str hashes it with SHA-512, so the order does not depend on
    PYTHONHASHSEED or the platform.
    """
    order = list(arms)
    random.Random(f"{seed}:{item_id}").shuffle(order)
    return order


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
        # --workers N (harness/run/stages/workers.py): one tally for all workers, and the items
        # handed out from one iterator in the study's order, each to the first worker that is free.
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
                            await ItemOnArm(self, item, arm).run()
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

    async def restart(self, arm: str) -> None:
        try:
            handle = await self.backend.restart_arm(arm)
        except InfraError as restart_error:
            log.warning("arm restart failed", error=str(restart_error))
            return  # the next attempt fails fast and is counted
        await self.clients[arm].aclose()
        self.clients[arm] = seam_client(handle.seam_url)
        self.seam_urls[arm] = handle.seam_url

    async def met_bound(
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

    async def tell_proxy(self, arm: str, item: str | None, turn: int) -> None:
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
                self.write(record)

    def write(self, record: TurnRecord) -> None:
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
