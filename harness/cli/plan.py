"""`harness plan simulate PLAN`: the analysis plan's whole decision rule, interim look included,
simulated at zero spend over the design's scenarios (harness/report/confirmatory/simulate.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from harness.cli.lazy import typer_app

plan_app = typer_app(
    help="The analysis plan: simulate its decision rule at zero spend before any paid call.",
    no_args_is_help=True,
)


@plan_app.command()
def simulate(
    plan: Path = typer.Argument(..., help="The analysis plan (analysis.toml)."),
    sims: int = typer.Option(4000, "--sims", min=100, help="Simulated studies per scenario."),
    seed: int | None = typer.Option(None, help="The simulation's seed (default: the plan's)."),
    strict: bool = typer.Option(False, help="Exit 1 when a target is not met."),
) -> int:
    """Simulate the plan's decision rule (looks included) with its sizes over three scenarios
    (every endpoint equal; one better by its sizing margin; one worse by its margin) and print
    P(GO) for each, every endpoint's MDE at the plan's power and whether the targets P(GO | one
    better) >= 0.80 and P(GO | all equal) <= 0.05 are met. Calls nothing, spends nothing."""
    from harness.errors import HarnessError
    from harness.report.confirmatory import describe
    from harness.report.confirmatory import simulate as run
    from harness.report.reading import load_analysis

    if not plan.is_file():
        raise HarnessError(f"{plan}: no such file", hint="pass the study's analysis.toml")
    try:
        loaded = load_analysis(plan)
    except ValueError as e:
        raise HarnessError(
            f"{plan}: {e}", hint="fix the plan (harness/report/reading/analysis.py gives its form)"
        ) from None
    shown = sys.stderr.isatty()

    def progress(scenario: int, scenarios: int, done: int, of: int) -> None:
        if shown:
            end = "\n" if scenario + 1 == scenarios and done == of else ""
            print(f"\rscenario {scenario + 1}/{scenarios}: {done}/{of} studies", end=end,
                  file=sys.stderr, flush=True)  # fmt: skip

    result = run(loaded, sims, loaded.seed if seed is None else seed, progress)
    for line in describe(result, loaded):
        typer.echo(line)
    met = result.target_better() and result.target_equal()
    return 1 if strict and not met else 0
