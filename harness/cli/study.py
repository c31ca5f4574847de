"""`harness record STUDY`, `harness live STUDY --cap N` and `harness cleanup`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

import typer

from harness.cli.options import (
    ALLOW_MISSES,
    ARM,
    ISOLATION,
    LIMIT,
    NEW_LEDGER_BRANCH,
    RESUME,
    RUN_DIR,
    SHARD,
    SKIP_SUITE,
    STUDY_FILE,
    WORKERS,
    isolation_choice,
)

if TYPE_CHECKING:
    # Imported when a command runs: loading a study pulls in the vendor SDKs (pins), seconds
    # that every other `harness` command should not pay.
    from harness.run import RunResult


def _run(
    study: Path,
    mode: Literal["record", "live"],
    run_dir: Path,
    arm: list[str],
    limit: int | None,
    isolation: str,
    cap: str = "",
    resume: Path | None = None,
    allow_misses: bool = False,
    shard: str | None = None,
    workers: int | None = None,
    new_ledger_branch: bool = False,
    skip_suite: bool = False,
) -> int:
    from harness.run import RunRequest, run_study
    from harness.run.live import check_priced_models
    from harness.run.stages import resolve_shard
    from harness.study import load_study

    spec = resolve_shard(shard)
    loaded = load_study(study)
    for warning in check_priced_models(loaded, mode):  # refused in live mode
        typer.echo(warning, err=True)

    request = RunRequest(
        study=loaded,
        mode=mode,
        run_root=run_dir,
        arms=arm,
        limit=limit,
        isolation=isolation_choice(isolation),
        cap=cap,
        resume_from=resume,
        allow_misses=allow_misses,
        shard=spec,
        workers=workers,
        new_ledger_branch=new_ledger_branch,
        skip_suite=skip_suite,
    )
    return _report(run_study(request))


def _report(result: RunResult) -> int:
    run = result.header.study
    assert run is not None
    outcomes = ", ".join(f"{k} {v}" for k, v in sorted(run.outcomes.items())) or "no turns"
    verdict = "passed" if run.passed else "interrupted" if run.interrupted else "FAILED"
    typer.echo(f"run {result.header.run_id}: {verdict}")
    if run.shard is not None:
        typer.echo(f"  shard {run.shard.label} ({run.shard.source}): {run.items} item(s)")
    if run.resumed_from:
        typer.echo(f"  resumes {run.resumed_from}: {run.skipped_pairs} finished item/arm pair(s)")
    typer.echo(f"  turns: {outcomes}; infrastructure failures: {run.infra_failures}")
    for line in arm_lines(run.arm_outcomes, run.memory_miss, run.arm_failures):
        typer.echo(line)
    if run.memory_miss:
        misses = ", ".join(f"{arm} {n}" for arm, n in run.memory_miss.items())
        typer.echo(f"  memory controls missed (turns per arm): {misses}")
    for line in miss_lines(run.memory_miss, run.allow_misses):
        typer.echo(line)
    why = f" ({run.isolation_reason})" if run.isolation_reason else ""
    typer.echo(f"  isolation: {run.isolation}{why}; clock: {run.clock_pinning}")
    if run.subject:
        typer.echo(f"  subject model: {run.subject}")
    if run.protocol is not None:  # checked against the lock before the run started
        addendum = run.protocol.addendum_sha256
        typer.echo(
            f"  protocol: {len(run.protocol.frozen)} frozen file(s) matched their lock"
            + (f"; addendum SHA-256 {addendum[:12]}..." if addendum else "")
        )
    if run.halted:
        typer.echo(
            f'  halted at once: {run.halted}; no later turn ran (on_stray = "fail" in the '
            "study finishes the run and fails it at its end)"
        )
    if run.stray_connections:
        typer.echo(
            f"  {run.stray_connections} stray connection(s) refused: see "
            f"{result.run_dir / 'egress.jsonl'}"
        )
        from harness.run.watch import summary_lines

        for line in summary_lines(run.refused, run.teardown_strays):
            typer.echo(f"    {line}")
    if run.proxy_rule is not None and not run.proxy_rule.startswith("enforced"):
        typer.echo(f"  proxy's own traffic: {run.proxy_rule}")
    if run.proxy_refused:
        refused = ", ".join(f"{dest} x{n}" for dest, n in sorted(run.proxy_refused.items()))
        typer.echo(
            f"  FAILED: the proxy itself tried connections outside its vendors: {refused}; "
            f"see {result.run_dir / 'proxy_egress.jsonl'}"
        )
    for arm, missing in sorted(run.egress_dropped.items()):
        typer.echo(
            f"  EVIDENCE DROPPED: the firewall counted {missing} refused attempt(s) of arm {arm!r} "
            "that egress.jsonl does not name (lost before they were read; it names the rest)"
        )
    typer.echo(f"  {result.run_dir}")
    return 0 if run.passed else 130 if run.interrupted else 1


def arm_lines(
    arm_outcomes: dict[str, dict[str, int]],
    memory_miss: dict[str, int],
    failures: dict[str, str],
) -> list[str]:
    """Each arm's outcomes on a line, then a FAILED line for each arm whose outcomes fail the
    run (harness/checks/arm_verdict.py), naming its first failed turn."""
    from harness.checks import outcome_summary

    lines = [
        f"    {arm}: {outcome_summary(outcomes, memory_miss.get(arm, 0))}"
        for arm, outcomes in arm_outcomes.items()
    ]
    lines += [f"  FAILED: arm {arm!r} {why}" for arm, why in failures.items()]
    return lines


def miss_lines(memory_miss: dict[str, int], allowed: bool) -> list[str]:
    """The line that says a run failed for its memory controls (or passed only by the flag)."""
    missed = ", ".join(f"{arm} {n}" for arm, n in memory_miss.items() if n)
    if not missed:
        return []
    if allowed:
        return [f"  memory controls missed: {missed} (allowed by --allow-misses)"]
    return [
        f"  FAILED: memory controls missed: {missed} (turns per arm; an arm that misses did not "
        "surface what it was told; --allow-misses passes the run anyway)"
    ]


def record(
    study: Path = STUDY_FILE,
    run_dir: Path = RUN_DIR,
    arm: list[str] = ARM,
    limit: int | None = LIMIT,
    isolation: str = ISOLATION,
    resume: Path | None = RESUME,
    allow_misses: bool = ALLOW_MISSES,
    shard: str | None = SHARD,
    workers: int | None = WORKERS,
) -> int:
    """Run a study in record mode: every model call answered by stubs, free."""
    return _run(
        study,
        "record",
        run_dir,
        arm,
        limit,
        isolation,
        resume=resume,
        allow_misses=allow_misses,
        shard=shard,
        workers=workers,
    )


def live(
    study: Path = STUDY_FILE,
    cap: str = typer.Option(..., "--cap", envvar="HARNESS_CAP", help="The run's cap in USD."),
    run_dir: Path = RUN_DIR,
    arm: list[str] = ARM,
    limit: int | None = LIMIT,
    isolation: str = ISOLATION,
    resume: Path | None = RESUME,
    allow_misses: bool = ALLOW_MISSES,
    shard: str | None = SHARD,
    workers: int | None = WORKERS,
    new_ledger_branch: bool = NEW_LEDGER_BRANCH,
    skip_suite: bool = SKIP_SUITE,
) -> int:
    """Run a study against the real vendors, metered and capped (after a clean record run)."""
    return _run(
        study,
        "live",
        run_dir,
        arm,
        limit,
        isolation,
        cap,
        resume,
        allow_misses,
        shard,
        workers,
        new_ledger_branch=new_ledger_branch,
        skip_suite=skip_suite,
    )


def merge(
    runs: list[Path] = typer.Argument(..., help="The shards' run directories, or their folder."),
    out: Path = typer.Option(..., "--out", help="The merged run's directory (new)."),
) -> int:
    """Join the shards of one study run into one run directory (refuses a missing, edited or
    foreign shard, naming it). A folder of runs gives, per shard, its latest run that passed."""
    from rundir.merge import merge_shards, pick_runs

    taken, left_out = pick_runs(list(runs))
    for left in left_out:
        typer.echo(f"left out: {left}")
    header = merge_shards(taken, out)
    run = header.study
    assert run is not None
    calls = sum(s.calls for s in run.merged_from)
    failed = [s for s in run.merged_from if s.passed is False]
    verdict = "every shard passed" if run.passed else f"{len(failed) or 'a'} shard(s) FAILED"
    typer.echo(
        f"merged {len(run.merged_from)} shards into {out}: {run.items} items, {calls} calls; "
        f"{verdict}"
    )
    for shard in failed:
        typer.echo(
            f"  FAILED: shard {shard.index}/{shard.count} ({shard.run_dir}): {shard.failure}"
        )
    return 0 if run.passed else 1


def cleanup(
    run_dir: Path = RUN_DIR,
    force: bool = typer.Option(
        False, help="Also stop the runs under --run-dir whose harness still runs (never another's)."
    ),
) -> None:
    """Stop what a crashed run left behind: processes (pids.json), containers, networks,
    iptables rules (by their harness.run label), of the runs under --run-dir only."""
    from harness.errors import HarnessError
    from harness.isolation.docker import DockerBackend
    from harness.isolation.local import LocalBackend

    if not run_dir.is_dir():  # a mistyped folder would otherwise read "nothing to clean up"
        raise HarnessError(
            f"--run-dir {run_dir} is not a folder, so none of its runs can be cleaned up",
            hint="give the folder the crashed run was written under (its --run-dir)",
        )
    # Each backend removes what its crashed runs left: docker containers, networks, rules (by
    # label/comment) and bounded disks; local processes (pids.json), their OS rules and
    # cgroups. Only of the runs under run_dir (harness/isolation/owner.py): docker first, as
    # the local backend's removes the pids.json that names a run's harness.
    done: list[str] = []
    for backend in (DockerBackend, LocalBackend):
        done += backend.cleanup(run_dir, force=force)
    for line in done or ["nothing to clean up"]:
        typer.echo(line)
