"""One study run end to end, in four stages that each own their files.

prepare (harness/run/stages/prepare.py): the checks, the run directory and its header, run.json;
start (stages/start.py): the proxy up, and everything that started down again at the end;
drive (stages/drive.py): every item's turns through every arm, into turns.jsonl;
finish (stages/finish.py): the strays, memory controls and verdict, and the manifest in run.json.
Each stage hands the next what it needs, so none goes back into another's files
(`python -m bench.flow_bench` measures the path).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager

import structlog

from harness.errors import HarnessError
from harness.run.live import commit_to_branch, live_job
from harness.run.stages import Isolation, Plan, RunRequest, RunResult, drive, finish, prepare
from ledger.git_branch import from_environment

__all__ = ["Isolation", "RunRequest", "RunResult", "run_study"]

log = structlog.get_logger("harness.study")


def run_study(request: RunRequest) -> RunResult:
    """Everything that can be checked is checked before a process starts."""
    plan = prepare(request)
    if request.mode != "live":
        return finish(plan, drive(plan))
    with _one_live_job(plan):
        try:
            result = finish(plan, drive(plan))
        except BaseException:
            # A run that stopped was settled too (its proxy stopped): commit it all the same,
            # and let the run's own error be the one reported.
            try:
                _commit(plan)
            except HarnessError as e:
                log.error("the ledger was not committed", error=e.message)
            raise
        _commit(plan)
        return result


def _commit(plan: Plan) -> None:
    """The proxy has settled the run: its entries go to the study's private branch, while this
    job still holds the keys (no other run's entries can come in between)."""
    study = plan.study
    branch = from_environment(study.file.ledger_repo, study.file.ledger_branch, study.path.parent)
    commit_to_branch(study.ledger_location, branch, plan.header.run_id)


@contextmanager
def _one_live_job(plan: Plan) -> Iterator[None]:
    """The ledger's live-job slot for the whole run, until the proxy has settled it. A run
    refused here started nothing: its fresh run directory goes, so no half-run is left."""
    if plan.request.live_job is not None:
        # A pilot's leg: the pilot holds the slot from its first leg to its last.
        plan.request.live_job.hand_to(plan.header.run_id, str(plan.run_dir.resolve()))
        yield
        return
    shard = plan.request.shard
    job = f"{plan.study.study_sha256[:16]}-shards-of-{shard.count}" if shard else ""
    try:
        held = live_job(
            plan.study.ledger_location,
            plan.header.run_id,
            plan.run_dir,
            job=job,
            slot=str(shard.index) if shard else "",
        )
    except HarnessError:
        shutil.rmtree(plan.run_dir, ignore_errors=True)
        raise
    with held:
        yield
