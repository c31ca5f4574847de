"""`harness report RUN_DIR`: per-arm outcomes, latency, calls and cost of a run."""

from __future__ import annotations

from pathlib import Path

import typer


def report(
    run_dir: Path = typer.Argument(..., help="A run directory (runs/<run-id>)."),
    as_json: bool = typer.Option(False, "--json", help="Print report.json instead of a table."),
) -> None:
    """Summarise a run per arm (turn outcomes, first/last-token latency, calls, tokens, cost,
    refused connections) from its files; also written to RUN_DIR/report.json."""
    from harness.report import build_report, render, write_report

    built = build_report(run_dir)
    path = write_report(run_dir, built)
    if as_json:
        typer.echo(path.read_text(encoding="utf-8"), nl=False)
    else:
        typer.echo(render(built))
