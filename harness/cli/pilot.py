"""`harness pilot STUDY --legs FILE --cap USD`: the live pilot's legs under one stage."""

from __future__ import annotations

from pathlib import Path

import typer

from harness.cli.options import (
    ISOLATION,
    NEW_LEDGER_BRANCH,
    RUN_DIR,
    SKIP_SUITE,
    STUDY_FILE,
    isolation_choice,
)
from harness.errors import HarnessError


def pilot(
    study: Path = STUDY_FILE,
    legs: Path = typer.Option(..., "--legs", help="The legs file (docs/pilot.md)."),
    cap: str = typer.Option(..., "--cap", envvar="HARNESS_CAP", help="The pilot's cap in USD."),
    from_run: Path | None = typer.Option(
        None,
        "--from",
        help="The record run to project from (default: the newest passing record run of the "
        "study under --run-dir).",
    ),
    basis: str = typer.Option(
        "worst",
        "--basis",
        help="worst (reserve-style, the default) | expected: what is compared with the cap.",
    ),
    stage: str | None = typer.Option(
        None, "--stage", help="The ledger stage (default: pilot-STUDY-TIMESTAMP, a new one)."
    ),
    out: Path | None = typer.Option(
        None,
        "--out",
        help="Where plan.json, pilot.json, unit_costs.json go (default: RUN_DIR/STAGE).",
    ),
    run_dir: Path = RUN_DIR,
    isolation: str = ISOLATION,
    new_ledger_branch: bool = NEW_LEDGER_BRANCH,
    skip_suite: bool = SKIP_SUITE,
) -> int:
    """Run the live pilot's legs under one ledger stage: legs dropped in the fixed order (never
    the first five) when the projection passes the cap; writes unit_costs.json."""
    from harness.run.live import cap_usd
    from harness.run.pilot import default_stage, load_legs, run_pilot
    from harness.study import load_study

    dollars = cap_usd(cap)  # before the study is read: nothing is written on a refusal
    if basis not in ("worst", "expected"):
        raise HarnessError(f"--basis {basis!r} is not one of worst, expected")
    loaded = load_study(study)
    stage_name = stage or default_stage(loaded)
    result = run_pilot(
        loaded,
        load_legs(legs),
        cap=dollars,
        run_root=run_dir,
        out=out or run_dir / stage_name,
        record_run=from_run,
        basis="worst" if basis == "worst" else "expected",
        stage=stage_name,
        isolation=isolation_choice(isolation),
        new_ledger_branch=new_ledger_branch,
        skip_suite=skip_suite,
    )
    for name in result.dropped:
        p = result.projections[name]
        typer.echo(f"dropped {name}: projected ${p.worst:.4f} worst, ${p.expected:.4f} expected")
    for leg in result.legs:
        verdict = "passed" if leg.passed else leg.why if leg.skipped else f"FAILED ({leg.why})"
        typer.echo(f"leg {leg.name}: {verdict} {leg.run_dir or ''}".rstrip())
    typer.echo(f"stage {result.stage}; unit costs: {result.out / 'unit_costs.json'}")
    return 0 if result.passed else 1
