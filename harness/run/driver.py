"""What an item uses of the orchestrator (harness/run/orchestrator.py), which runs it: the arms'
clients and watches, the tally, and its turn-level steps. Both ways to run an item take it:
turn by turn across arms (harness/run/coupled_item.py) and one arm after another
(harness/run/item_on_arm.py, whose ArmDriver adds what only it uses); and both end a turn the
same way with the strays it drew (`strays_after_turn`)."""

from __future__ import annotations

import time
from typing import Protocol

from arms.client import SeamClient, TurnResult
from harness.isolation import IsolationBackend
from harness.run.memory import MemoryStage, QuestionRecorder
from harness.run.turns import AttemptRecords, RunTally
from harness.run.watch import StrayConnection, StrayWatch, TurnWatch, strongest
from harness.study import Study
from rundir.instances import join
from rundir.turns import TurnLog, TurnRecord


class Driver(Protocol):
    study: Study
    arms: list[str]
    skip: frozenset[tuple[str, str]]
    run_id: str
    backend: IsolationBackend
    clients: dict[str, SeamClient]
    watch: TurnWatch
    strays: StrayWatch
    tally: RunTally
    turns: TurnLog
    deadline_s: float
    worker: int
    limited: set[str]
    memory: MemoryStage
    questions: QuestionRecorder
    spoiled: dict[str, str]  # memory item -> why its snapshot failed (every arm fails it)

    @property
    def stopping(self) -> bool: ...

    async def restart(self, arm: str) -> None: ...

    async def tell_proxy(self, arm: str, item: str | None, turn: int) -> None: ...

    async def met_bound(
        self,
        arm: str,
        records: AttemptRecords,
        number: int,
        turns: int,
        done: list[TurnRecord],
        result: TurnResult | None = None,
        strays: int = 0,
    ) -> bool: ...

    def write(self, record: TurnRecord) -> None: ...


def halted_turn(
    o: Driver, arm: str, records: AttemptRecords, number: int, stray: StrayConnection
) -> TurnRecord:
    """The record of turn `number`, which a stray connection cut while it ran (the study halts
    on strays): its answer kept if it ended within the grace, its outcome saying why."""
    error = f"run halted: {stray}"
    if stray.result is not None:
        record = records.answered(number, stray.result)
        record.outcome, record.error = "stray_connection", error
    else:
        record = records.failed(number, "stray_connection", error)
    record.stray_connections = o.strays.this_turn[arm]
    return record


async def strays_after_turn(o: Driver, record: TurnRecord) -> None:
    """Charge `record` (a turn that just ended) with the strays its arm drew during it; raises
    StrayConnection, with the record's outcome saying so, when the study halts on them."""
    arm = record.arm
    # Later strays are its teardown's; per worker's copy (strays.at_teardown).
    o.tally.last_turn_end[join(arm, o.worker)] = time.time()
    new = await o.strays.new(f"{arm} {record.item} turn {record.turn}")
    o.strays.turn_ended()
    record.stray_connections = o.strays.this_turn[arm]
    if new and o.strays.halt:
        # The turn ended before the watch saw it: its answer is kept, its outcome says why the
        # run stopped.
        halt = StrayConnection(strongest(new))
        record.outcome, record.error = "stray_connection", f"run halted: {halt}"
        raise halt
