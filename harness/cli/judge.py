"""`harness judge RUN_DIR... --rubrics DIR --judges judges.toml --out SET`: judging as a stage."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from rundir.judgments import JudgmentSet


def judge(
    run_dirs: list[Path] = typer.Argument(
        None, help="Run directories of one study (a run, then the runs that resumed it)."
    ),
    rubrics: Path | None = typer.Option(None, "--rubrics", help="Folder of rubric TOMLs."),
    judges: Path | None = typer.Option(None, "--judges", help="judges.toml: the pinned judges."),
    out: Path | None = typer.Option(None, "--out", help="The judgment set's folder (new)."),
    seal: Path | None = typer.Option(
        None, "--seal", help="Where the arm codes are sealed (default: SET.seal.json beside it)."
    ),
    stage: str = typer.Option(
        "confirmatory", "--stage", help="The stage's name (codes per stage)."
    ),
    seed: int | None = typer.Option(None, "--seed", help="The stage's seed (default: drawn)."),
    aa_run: Path | None = typer.Option(None, "--aa-run", help="A second run of the study (A/A)."),
    aa_arm: str | None = typer.Option(None, "--aa-arm", help="The arm judged against itself."),
    aa_pairs: int = typer.Option(30, "--aa-pairs", help="A/A pairs needed."),
    controls: int = typer.Option(10, "--controls-per-kind", help="Planted controls per kind."),
    attempts: int = typer.Option(
        3, "--attempts", help="Askings of a prompt before it is set aside."
    ),
    jobs: int = typer.Option(4, "--jobs", help="Prompts in flight at once."),
    verify: Path | None = typer.Option(
        None,
        "--verify",
        help="Re-check a set instead: every vote traced to its prompt and reply, the manifest "
        "bound by its seal (--seal, default SET.seal.json) and every derived field recomputed.",
    ),
    open_set: Path | None = typer.Option(
        None,
        "--open",
        help="Analysis: open a set's seal (--seal, default SET.seal.json) and print its outcomes "
        "(JSON) by run, arm, item, turn and metric.",
    ),
) -> None:
    """Judge runs with pinned judges (planted controls, both orders, sealed arm codes,
    repeats, A/A) into a judgment set; exits 1 unless every axis passed."""
    from harness.errors import HarnessError

    if verify is not None:
        _verify(verify, seal)
    if open_set is not None:
        _open_outcomes(open_set, seal)
        return
    if not run_dirs or rubrics is None or judges is None or out is None:
        raise HarnessError(
            "judging needs run directories, --rubrics, --judges and --out",
            hint="harness judge RUN_DIR --rubrics DIR --judges judges.toml --out SET",
        )
    from harness.judge import Settings, StageOptions, judging_progress, run_stage, seal_path_for

    options = StageOptions(
        stage=stage,
        seed=seed,
        seal=seal,
        aa_run=aa_run,
        aa_arm=aa_arm,
        aa_pairs=aa_pairs,
        settings=Settings(controls_per_kind=controls),
        attempts=attempts,
        jobs=jobs,
    )
    with judging_progress():
        manifest = run_stage(list(run_dirs), rubrics, judges, out, options)
    _echo_manifest(manifest)
    _echo_bill(out)
    typer.echo(
        f"wrote {out} ({len(manifest.set_aside)} set aside); sealed {seal_path_for(out, options)}"
    )
    raise typer.Exit(0 if all(a.status == "passed" for a in manifest.axes) else 1)


def _verify(verify: Path, seal: Path | None) -> None:
    """`--verify`: every problem of a set on its line; exits 1 if there is any."""
    from harness.judge import verify_set

    problems = verify_set(verify, seal)
    for problem in problems:
        typer.echo(problem)
    typer.echo(f"{verify}: {len(problems)} problem(s)")
    raise typer.Exit(1 if problems else 0)


def _open_outcomes(open_set: Path, seal: Path | None) -> None:
    """`--open`: the set's outcomes, its seal opened, as JSON."""
    from harness.judge import read_outcomes

    sealed = seal or open_set.parent / f"{open_set.name}.seal.json"
    typer.echo(read_outcomes(open_set, sealed).model_dump_json(indent=2))


def _echo_manifest(manifest: JudgmentSet) -> None:
    """Each bar, A/A control, third pass, halt and axis of the set, a line each."""
    for b in [*manifest.calibration, *manifest.running, *manifest.stability]:
        value = "-" if b.value is None else f"{b.value:.2f}"
        typer.echo(
            f"{b.rubric:<16} {b.judge:<20} {b.bar:<26} {value:>5} {b.op} {b.threshold:.2f} "
            f"({b.answered}/{b.held}) {b.status}"
        )
    for aa in manifest.aa:
        typer.echo(f"{aa.rubric:<16} A/A {aa.status}: {aa.detail}")
    for third in manifest.third_pass:
        typer.echo(
            f"{third.rubric:<16} third pass {third.status} ({'; '.join(third.trigger)}): "
            f"{third.detail}"
        )
    for halt in manifest.halts:
        typer.echo(halt)
    for axis in manifest.axes:
        typer.echo(f"axis {axis.rubric}: {axis.status.upper()}")
        for reason in axis.reasons:
            typer.echo(f"  {reason}")


def _echo_bill(out: Path) -> None:
    """What the HTTP judges' calls cost at the price table, from votes.jsonl (their bill)."""
    from decimal import Decimal

    from rundir.judgments import read_votes

    http = [v for v in read_votes(out) if v.cost_usd is not None or v.unpriced is not None]
    if http:
        usd = sum((Decimal(v.cost_usd) for v in http if v.cost_usd is not None), Decimal(0))
        unpriced = sum(v.cost_usd is None for v in http)
        typer.echo(
            f"judges' HTTP calls: {len(http)}, ${usd} at the price table"
            + (f", {unpriced} unpriced (see votes.jsonl)" if unpriced else "")
        )
