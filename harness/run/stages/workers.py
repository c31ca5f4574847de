"""`--workers N`: items in parallel on one machine, N independent sets of arms, one run.

What is shared: the run directory, the one proxy (its call log, its stubs, in live mode its one
ledger and cap), its control channel, turns.jsonl, the tally and the progress display. What is
not: each worker starts its own copy of every arm (`A`, `A@1`, `A@2`, ... for worker 0, 1, 2;
rundir/control/proxy_file.py `instance_name`), each with its own proxy listeners, process and seam.

Why attribution holds: the proxy charges a call to the listener it arrived on, and each instance
has its own; the control channel's board is keyed by instance (a worker tells the proxy
`A@k runs item I turn T`), so two workers running arm A at once never share a turn. The call
record names the arm (`arm_of`), never the instance, so records do not depend on N.

Items are handed out from one iterator in the study's order, each to the first worker that is
free; an item runs all its arms on one worker, in the seeded order, with retries on that worker's
arms as today. turns.jsonl (and a memory study's questions.jsonl) is sorted by the items' order
once the workers are done (records of one item keep their order), so it does not depend on N
either.

Memory studies (seam v2, harness/run/memory/memory_stage.py): the items that share a history (LoCoMo
asks many questions of one conversation) are handed out together, as one unit, to one worker,
which runs them in the study's order. So each history is ingested once per arm, by the item that
ingests it with one worker, into that worker's copy of the arm (its own state folder,
`logs/A@k/state`), and snapshotted where one worker would put it (`snapshots/A/<history>`): the
ingestion lines, their calls and the snapshots' hashes do not depend on N.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from harness.isolation import ArmHandle, IsolationBackend, ProxyInfo, ProxySettings
from harness.run.memory import stop_arm
from harness.run.orchestrator import Orchestrator, RunTally
from harness.run.stages.prepare import Plan
from harness.study import ArmSpec, Item
from rundir.atomic import write_atomic
from rundir.control import instance_name
from rundir.jsonlines import read_lines
from rundir.runs import AppliedLimits
from rundir.turns import TurnLog, TurnRecord


class WorkerBackend(IsolationBackend):
    """The run's backend as one worker sees it: arm `A` is this worker's instance `A@k`."""

    def __init__(self, inner: IsolationBackend, worker: int, looks: threading.Lock) -> None:
        self.inner = inner
        self.worker = worker
        # One look at the egress sources at a time, all workers together: each worker's stray
        # watch reads them from a thread, and two reading one source's tail at once would read
        # its lines twice (flagged `rewritten`) and count its attempts twice.
        self.looks = looks
        self.isolation = inner.isolation
        self.isolation_reason = inner.isolation_reason
        self.clock_pinning = inner.clock_pinning
        self.clock_pin = inner.clock_pin
        self.limits = inner.limits

    def _name(self, arm: str) -> str:
        return instance_name(arm, self.worker)

    async def start_proxy(self, settings: ProxySettings) -> ProxyInfo:
        raise RuntimeError("the run's proxy is started once, by the drive")

    async def start_arm(self, name: str, spec: ArmSpec, proxy: ProxyInfo) -> ArmHandle:
        return await self.inner.start_arm(self._name(name), spec, proxy)

    def arm_alive(self, name: str) -> bool:
        return self.inner.arm_alive(self._name(name))

    async def restart_arm(self, name: str) -> ArmHandle:
        return await self.inner.restart_arm(self._name(name))

    def pin_clock(self, name: str, clock: datetime) -> None:
        self.inner.pin_clock(self._name(name), clock)

    async def stop(self) -> None:
        """The drive stops the run's backend once, every worker's arms and then the proxy."""

    def limit_hits(self, name: str) -> list[str]:
        return self.inner.limit_hits(self._name(name))

    def applied_limits(self) -> dict[str, AppliedLimits]:
        return self.inner.applied_limits()

    def image_digests(self) -> dict[str, str]:
        return self.inner.image_digests()

    def egress_attempts(self) -> list[dict[str, object]]:
        with self.looks:
            return self.inner.egress_attempts()

    async def stop_arm(self, name: str) -> None:
        """One arm stopped for a snapshot (harness/run/memory/arm_stop.py): this worker's copy."""
        await stop_arm(self.inner, self._name(name))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def units(items: list[Item]) -> list[list[Item]]:
    """What is handed out to one worker at a time: each item alone, except that the items of
    one memory history go together (in the study's order, placed where the first of them is)."""
    out: list[list[Item]] = []
    by_history: dict[str, list[Item]] = {}
    for item in items:
        history = item.memory.history.id if item.memory is not None else None
        if history is None:
            out.append([item])
        elif history in by_history:
            by_history[history].append(item)
        else:
            by_history[history] = [item]
            out.append(by_history[history])
    return out


def _take(shared: Iterator[list[Item]]) -> Iterator[Item]:
    """One worker's items: whole units from the shared iterator, one after another."""
    for unit in shared:
        yield from unit


async def drive_workers(
    plan: Plan,
    proxy: ProxyInfo,
    turns: TurnLog,
    advance: Callable[[TurnRecord], None],
    tally: RunTally,
) -> RunTally:
    """Run plan.items over plan.workers workers; a worker whose arms fail keeps taking items
    (its failures are recorded per item, as with one worker); an exception of one (a halt,
    a fatal infrastructure failure) cancels the others and is raised."""
    hand_out = iter(units(plan.items))  # one iterator: each unit taken exactly once
    looks = threading.Lock()
    orchestrators = []
    for worker in range(plan.workers):
        orchestrator = Orchestrator(
            plan.study,
            plan.arms,
            plan.items,
            WorkerBackend(plan.backend, worker, looks),
            plan.settings.run_id,
            turns,
            advance,
            skip=plan.skip,
            tally=tally,
            hand_out=_take(hand_out),
            worker=worker,
        )
        orchestrators.append(orchestrator)
    first = orchestrators[0]
    for other in orchestrators[1:]:  # one Ctrl-C for the run: the first worker's
        other.ctrl_c, other.owns_signals = first.ctrl_c, False
    with first.ctrl_c.handled():
        first.owns_signals = False
        tasks = [asyncio.create_task(o.run(proxy)) for o in orchestrators]
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
    return tally


def sort_turns(path: Path, items: list[Item]) -> None:
    """turns.jsonl (or questions.jsonl) in the items' order (stable: an item's own lines keep
    their order), so the file a run writes does not depend on how many workers ran it."""
    if not path.exists():
        return
    order = {item.id: n for n, item in enumerate(items)}
    lines = [line for line in read_lines(path) if line.strip()]

    def key(line: str) -> int:
        item = json.loads(line).get("item")
        return order.get(item, len(order)) if isinstance(item, str) else len(order)

    lines.sort(key=key)
    write_atomic(path, "".join(line + "\n" for line in lines))
