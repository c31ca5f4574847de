"""`harness report RUN_DIR [RUN_DIR ...]`: the study report, and `--check-public DIR`."""

from __future__ import annotations

from pathlib import Path

import typer

from harness.errors import HarnessError


def report(
    run_dirs: list[Path] = typer.Argument(
        None, help="Run directories (runs/<run-id>): a run, then the runs that resumed it."
    ),
    formats: str = typer.Option("md,html", "--format", help="Any of md,html,pdf."),
    out: Path | None = typer.Option(
        None, "--out", help="Folder to write into (default reports/<run-id>; never the run)."
    ),
    public: bool = typer.Option(
        False, "--public", help="Ids to ordinals, paths to kind and base name; scanned."
    ),
    gate: Path | None = typer.Option(None, "--gate", help="gate.json of this study."),
    ledger: Path | None = typer.Option(None, "--ledger", help="The spend ledger."),
    prices: Path | None = typer.Option(None, "--prices", help="A price table (TOML)."),
    judgments: Path | None = typer.Option(
        None, "--judgments", help="A judgment set (`harness judge --out`) or judgments (JSONL)."
    ),
    seal: Path | None = typer.Option(
        None, "--seal", help="The judgment set's seal (default SET.seal.json beside it)."
    ),
    analysis: Path | None = typer.Option(
        None, "--analysis", help="The frozen analysis plan (TOML): the verdicts."
    ),
    pack: Path | None = typer.Option(
        None, "--pack", help="The T1 pack (JSONL): items' histories as clusters, types as families."
    ),
    provenance: Path | None = typer.Option(None, "--provenance", help="Materials (JSONL)."),
    header: Path | None = typer.Option(None, "--header", help="The study's own text (TOML)."),
    scan: Path | None = typer.Option(None, "--scan", help="`harness scan --out` result (JSON)."),
    gold: Path | None = typer.Option(None, "--gold", help="Gold answers (JSONL), judge-free."),
    resamples: int = typer.Option(10_000, "--resamples", help="Bootstrap resamples."),
    seed: int = typer.Option(0, "--seed", help="Bootstrap seed."),
    as_json: bool = typer.Option(False, "--json", help="Print report.json instead of a table."),
    partial: bool = typer.Option(
        False, "--partial", help="Report a run that has not finished, marked unfinished."
    ),
    paper: str = typer.Option("a4", "--paper", help="The PDF's paper: a4 or letter."),
    check_public: Path | None = typer.Option(
        None,
        "--check-public",
        help="Scan a public copy (with the RUN_DIRs it came from); exit 1 if it names anything "
        "private.",
    ),
) -> None:
    """Write the study report (13 sections; markdown, HTML, PDF) with report.json and
    records.jsonl into --out, from the runs' files and the optional inputs; calls no model."""
    from harness.report.formats.table import render_table
    from harness.report.formats.terminal import report_progress
    from harness.report.generate import generate, private_words
    from harness.report.public import check_public as scan_public
    from harness.report.reading.inputs import load_inputs
    from harness.report.reading.rundata import load_runs

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
        if not runs:
            raise HarnessError(
                "--check-public needs the run directories the copy was made from",
                hint="harness report RUN_DIR --check-public DIR [--header FILE]",
            )
        findings = scan_public(check_public, private_words(load_runs(runs), inputs))
        for finding in findings:
            typer.echo(str(finding))
        typer.echo(f"{check_public}: {len(findings)} private name(s) found")
        raise typer.Exit(1 if findings else 0)
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
