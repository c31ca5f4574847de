"""`harness report RUN_DIR [RUN_DIR ...]`: the study report, and `--check-public DIR`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from harness.errors import HarnessError

if TYPE_CHECKING:
    from harness.report.reading import Inputs

# The command's options, declared once here so its signature reads as a list of names.
RUN_DIRS = typer.Argument(
    None, help="Run directories (runs/<run-id>): a run, then the runs that resumed it."
)
FORMATS = typer.Option("md,html", "--format", help="Any of md,html,pdf.")
OUT = typer.Option(
    None, "--out", help="Folder to write into (default reports/<run-id>; never the run)."
)
PUBLIC = typer.Option(
    False, "--public", help="Ids to ordinals, paths to kind and base name; scanned."
)
GATE = typer.Option(None, "--gate", help="gate.json of this study.")
LEDGER = typer.Option(None, "--ledger", help="The spend ledger.")
PRICES = typer.Option(None, "--prices", help="A price table (TOML).")
JUDGMENTS = typer.Option(
    None, "--judgments", help="A judgment set (`harness judge --out`) or judgments (JSONL)."
)
SEAL = typer.Option(
    None, "--seal", help="The judgment set's seal (default SET.seal.json beside it)."
)
ANALYSIS = typer.Option(None, "--analysis", help="The frozen analysis plan (TOML): the verdicts.")
PACK = typer.Option(
    None, "--pack", help="The T1 pack (JSONL): items' histories as clusters, types as families."
)
PROVENANCE = typer.Option(None, "--provenance", help="Materials (JSONL).")
HEADER = typer.Option(None, "--header", help="The study's own text (TOML).")
SCAN = typer.Option(None, "--scan", help="`harness scan --out` result (JSON).")
GOLD = typer.Option(None, "--gold", help="Gold answers (JSONL), judge-free.")
RESAMPLES = typer.Option(10_000, "--resamples", help="Bootstrap resamples.")
SEED = typer.Option(0, "--seed", help="Bootstrap seed.")
AS_JSON = typer.Option(False, "--json", help="Print report.json instead of a table.")
PARTIAL = typer.Option(
    False, "--partial", help="Report a run that has not finished, marked unfinished."
)
PAPER = typer.Option("a4", "--paper", help="The PDF's paper: a4 or letter.")
CHECK_PUBLIC = typer.Option(
    None,
    "--check-public",
    help="Scan a public copy (with the RUN_DIRs it came from); exit 1 if it names anything "
    "private.",
)


def report(
    run_dirs: list[Path] = RUN_DIRS,
    formats: str = FORMATS,
    out: Path | None = OUT,
    public: bool = PUBLIC,
    gate: Path | None = GATE,
    ledger: Path | None = LEDGER,
    prices: Path | None = PRICES,
    judgments: Path | None = JUDGMENTS,
    seal: Path | None = SEAL,
    analysis: Path | None = ANALYSIS,
    pack: Path | None = PACK,
    provenance: Path | None = PROVENANCE,
    header: Path | None = HEADER,
    scan: Path | None = SCAN,
    gold: Path | None = GOLD,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    as_json: bool = AS_JSON,
    partial: bool = PARTIAL,
    paper: str = PAPER,
    check_public: Path | None = CHECK_PUBLIC,
) -> None:
    """Write the study report (13 sections; markdown, HTML, PDF) with report.json and
    records.jsonl into --out, from the runs' files and the optional inputs; calls no model."""
    from harness.report import generate
    from harness.report.formats import render_table, report_progress
    from harness.report.reading import load_inputs

    if resamples < 1:
        raise HarnessError(
            f"--resamples {resamples}: the bootstrap needs at least one resample",
            hint="use the default (10000), or at least 1000 for a published interval",
        )
    if not run_dirs and check_public is None:
        raise HarnessError("no run directory given", hint="harness report runs/<run-id> [...]")
    inputs = load_inputs(
        gate=gate,
        ledger=ledger,
        prices=prices,
        judgments=judgments,
        provenance=provenance,
        header=header,
        scan=scan,
        gold=gold,
        seal=seal,
        analysis=analysis,
        pack=pack,
    )
    runs = list(run_dirs or [])
    if check_public is not None:
        raise typer.Exit(scan_public_copy(check_public, runs, inputs))
    with report_progress() as step:
        built = generate(
            runs,
            inputs,
            out=out,
            formats=tuple(f.strip() for f in formats.split(",") if f.strip()),
            public=public,
            resamples=resamples,
            seed=seed,
            partial=partial,
            paper=paper,
            step=step,
        )
    if as_json:
        typer.echo((built.out / "report.json").read_text(encoding="utf-8"), nl=False)
    else:
        typer.echo(render_table(built.report))
        typer.echo(f"wrote {', '.join(p.name for p in built.files)} to {built.out}")


def scan_public_copy(copy: Path, runs: list[Path], inputs: Inputs) -> int:
    """`--check-public`: print what the public copy still names of the runs; 1 if anything."""
    from harness.report import check_public as scan_public
    from harness.report import private_words
    from harness.report.reading import load_runs

    if not runs:
        raise HarnessError(
            "--check-public needs the run directories the copy was made from",
            hint="harness report RUN_DIR --check-public DIR [--header FILE]",
        )
    findings = scan_public(copy, private_words(load_runs(runs), inputs))
    for finding in findings:
        typer.echo(str(finding))
    typer.echo(f"{copy}: {len(findings)} private name(s) found")
    return 1 if findings else 0
