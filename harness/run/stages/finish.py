"""The pipeline's last stage: what the run saw, its verdict, and the manifest in run.json.

Everything is stopped by now (the start stage stops what it started). This stage reads what the
backend refused, attributes strays to turns or to teardown, counts memory-control misses, decides
whether the run passed and completes run.json with the file list (rundir/runs/manifest.py rewrites
the header prepare wrote). A run that stopped on an infrastructure failure or on a broken
question raises here, after its run.json says so.
"""

from __future__ import annotations

import operator
import shutil
from dataclasses import dataclass
from pathlib import Path

import structlog

from harness.checks import arm_failures, misses_per_arm, per_arm
from harness.errors import HarnessError
from harness.isolation import PROXY_READY, attempts
from harness.run.stages.drive import Driven
from harness.run.stages.prepare import Plan
from harness.run.watch import at_teardown, by_destination
from ledger.ledger import chain_end
from rundir.instances import by_arm
from rundir.runs import RunHeader, now_iso, write_manifest
from rundir.turns import read_turns

log = structlog.get_logger("harness.study")


@dataclass
class RunResult:
    run_dir: Path
    header: RunHeader

    @property
    def passed(self) -> bool:
        return bool(self.header.study and self.header.study.passed)


def finish(plan: Plan, driven: Driven) -> RunResult:
    backend, run_dir, header = plan.backend, plan.run_dir, plan.header
    _refused_before_start(plan, driven)
    stray = backend.egress_attempts()
    images = backend.image_digests()
    run = header.study
    assert run is not None
    run.interrupted = driven.interrupted
    run.infra_failures = driven.infra_failures
    run.outcomes = driven.outcomes or _count(run_dir / "turns.jsonl")
    run.stray_connections = sum(attempts(entry) for entry in stray)  # a line may count several
    run.memory_miss = misses_per_arm(run_dir / "turns.jsonl")
    # Each arm's outcomes, and the arms whose failures fail the run (harness/checks/arm_verdict.py).
    arms = per_arm(read_turns(run_dir / "turns.jsonl"))
    run.arm_outcomes = {name: dict(arm.outcomes) for name, arm in arms.items()}
    run.max_failure_rate = plan.study.file.verdict.max_failure_rate
    run.arm_failures = arm_failures(arms, run.max_failure_rate)
    run.refused = by_destination(stray)
    ran = driven.tally
    run.teardown_strays = by_destination(at_teardown(stray, ran.seen_strays, ran.last_turn_end))
    run.halted = str(driven.halted) if driven.halted else None
    run.stopped = str(driven.bad_input) if driven.bad_input else None
    # Per arm, not per worker's copy (rundir/instances.py): every copy holds the same bounds,
    # and what the kernel log lost is summed over the copies.
    run.arm_limits = by_arm(backend.applied_limits(), lambda first, _copy: first)
    run.egress_dropped = by_arm(dict(backend.egress_dropped), operator.add)
    run.proxy_rule, run.proxy_refused = backend.proxy_rule, dict(backend.proxy_refused)
    run.passed = (
        driven.fatal is None
        and driven.halted is None
        and driven.bad_input is None
        and not driven.interrupted
        and not stray
        and not run.proxy_refused  # the proxy itself tried a connection outside its rule
        and not run.outcomes.get("infra_failed")
        and not run.arm_failures
        # An arm that forgot what it was told fails the run, or the gate would certify a
        # degenerate path; --allow-misses accepts it.
        and (run.allow_misses or not any(run.memory_miss.values()))
    )
    header.ended = now_iso()
    ledger = plan.study.ledger_location if plan.request.mode == "live" else None
    write_manifest(
        run_dir,
        header,
        prices=plan.prices,
        ledger=ledger,
        ledger_chain=chain_end(ledger) if ledger else None,
        images=images,
    )  # rewrites run.json with the file list
    if driven.fatal:
        hint = f"see the logs in {run_dir}/logs"
        raise HarnessError(f"the run stopped: {driven.fatal}", hint=hint)
    if driven.bad_input:
        raise driven.bad_input  # the user's one line (exit 2), now that run.json says it ended
    if driven.halted:
        # A failed run (exit 1, with its summary), not a usage error: run.json says why.
        log.error(
            "run halted at once", reason=str(driven.halted), egress=str(run_dir / "egress.jsonl")
        )
    return RunResult(run_dir, header)


def _refused_before_start(plan: Plan, driven: Driven) -> None:
    """A run whose proxy refused to start (a stage cap it would pass, a ledger it cannot open)
    ran nothing and reserved nothing: its run directory goes, as one refused before the proxy
    does (pipeline.py), so a folder of shard runs holds only runs that ran and a re-run of the
    shard needs no hand deletion. The proxy's own words are in the error."""
    run_dir = plan.run_dir
    log = run_dir / "logs" / "proxy.log"
    started = log.is_file() and PROXY_READY in log.read_text(encoding="utf-8", errors="replace")
    if driven.fatal is None or started or (run_dir / "reservations.jsonl").exists():
        return
    shutil.rmtree(run_dir, ignore_errors=True)
    raise HarnessError(
        f"the run was refused before it started (nothing ran, nothing was kept): {driven.fatal}",
        hint="fix what the proxy names, then run again",
    )


def _count(turns_path: Path) -> dict[str, int]:
    """Outcomes from turns.jsonl, for a drive that ended before the orchestrator's tally did."""
    counts: dict[str, int] = {}
    for record in read_turns(turns_path):
        counts[record.outcome] = counts.get(record.outcome, 0) + 1
    return counts
