"""The pipeline's third stage: drive every item's turns through every arm, into turns.jsonl.

It owns turns.jsonl (opened and closed here, written by the orchestrator) and the progress
display, and turns how the drive ended (done, Ctrl-C, an infrastructure failure, a stray that
halted the run, a question found broken) into a `Driven` record the finishing stage reads
without catching anything.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field

import structlog

from harness.datasets import DatasetError
from harness.isolation import InfraError
from harness.run.orchestrator import Orchestrator, RunTally
from harness.run.stages.prepare import Plan
from harness.run.stages.start import running
from harness.run.watch import StrayConnection
from rundir.turns import TurnLog, TurnRecord

log = structlog.get_logger("harness.study")
# Threads each worker may keep busy at once (a snapshot or an arm's stop, its turn watch's
# liveness check, its bound check, its stray watch's look), so workers never queue for one.
THREADS_PER_WORKER = 4


def drive_pool(workers: int) -> ThreadPoolExecutor:
    """The drive's thread pool: sized by the workers, not asyncio's default min(32, cores + 4)
    (6 on 2 cores), under which 8 workers' blocking steps waited for each other."""
    threads = THREADS_PER_WORKER * max(1, workers) + 4
    return ThreadPoolExecutor(max_workers=threads, thread_name_prefix="harness-drive")


@dataclass
class Driven:
    """How the drive ended. `tally` is the orchestrator's, also when the run was cut short."""

    tally: RunTally = field(default_factory=RunTally)
    interrupted: bool = False
    infra_failures: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)  # empty: count them from turns.jsonl
    fatal: str | None = None  # the infrastructure failure that stopped the run
    halted: StrayConnection | None = None
    bad_input: DatasetError | None = None  # a question found broken when its item ran


def drive(plan: Plan) -> Driven:
    driven = Driven()
    with _progress(plan.turns_to_run) as advance:
        try:
            tally = asyncio.run(_drive(plan, advance, driven))
            driven.interrupted, driven.infra_failures = tally.interrupted, tally.infra_failures
            driven.outcomes = dict(tally.outcomes)
        except (KeyboardInterrupt, asyncio.CancelledError):
            driven.interrupted = True
        except InfraError as e:
            driven.fatal, driven.infra_failures = str(e), 1
        except StrayConnection as e:
            driven.halted = e
        except DatasetError as e:
            # The user's error (one line) once the run is ended as failed (finish.py), so that
            # `harness runs` and the report do not show a stopped run as still running.
            driven.bad_input = e
    return driven


async def _drive(plan: Plan, advance: Callable[[TurnRecord], None], driven: Driven) -> RunTally:
    # asyncio.run shuts it down at the end.
    asyncio.get_running_loop().set_default_executor(drive_pool(plan.workers))
    turns = TurnLog(plan.run_dir / "turns.jsonl")
    try:
        async with running(plan.backend, plan.settings) as proxy:
            if plan.workers > 1:  # items in parallel, one proxy (harness/run/stages/workers.py)
                from harness.run.stages.workers import drive_workers

                return await drive_workers(plan, proxy, turns, advance, driven.tally)
            orchestrator = Orchestrator(
                plan.study,
                plan.arms,
                plan.items,
                plan.backend,
                plan.settings.run_id,
                turns,
                advance,
                skip=plan.skip,
            )
            driven.tally = orchestrator.tally
            return await orchestrator.run(proxy)
    finally:
        # After the stop, and inside the task: on Ctrl-C asyncio.run cancels the task and waits
        # for its finally blocks, so the turn log is closed whichever way the drive ends.
        turns.close()
        if plan.workers > 1:  # in the items' order, as one worker writes it
            from harness.run.stages.workers import sort_turns

            sort_turns(turns.path, plan.items)
            sort_turns(plan.run_dir / "questions.jsonl", plan.items)


@contextmanager
def _progress(total: int) -> Iterator[Callable[[TurnRecord], None]]:
    """A progress bar on a terminal; one structured log line per turn otherwise."""
    if not sys.stderr.isatty() or os.environ.get("HARNESS_NO_PROGRESS"):

        def log_turn(record: TurnRecord) -> None:
            log.info(
                "turn",
                item=record.item,
                arm=record.arm,
                turn=record.turn,
                outcome=record.outcome,
                first_token_s=record.first_token_s,
                last_token_s=record.last_token_s,
                attempts=record.attempts,
            )

        yield log_turn
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=Console(stderr=True), transient=False) as bar:
        task = bar.add_task("turns", total=total)

        def step(record: TurnRecord) -> None:
            bar.update(task, advance=1, description=f"{record.item} {record.arm} t{record.turn}")

        yield step
