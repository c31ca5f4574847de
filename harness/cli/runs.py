"""`harness runs ROOT`: one line per run under ROOT, and a static index page."""

from __future__ import annotations

import time
from pathlib import Path

import typer


def runs(
    root: Path = typer.Argument(Path("runs"), help="The folder of runs (default runs/)."),
    reports: Path = typer.Option(
        Path("reports"),
        "--reports",
        help="Where `harness report` wrote reports (reports/<run-id>).",
    ),
    html: Path | None = typer.Option(None, "--html", help="Also write a static index page here."),
    watch: float = typer.Option(
        0, "--watch", help="Print again every this many seconds (Ctrl-C stops); 0: once."
    ),
) -> None:
    """List the runs under a folder: study, mode, status, items done of planned, a headline and
    the report; --html writes a static index page. Reads the files only."""
    from harness.errors import HarnessError
    from harness.report import COLUMNS, index_page, list_runs
    from harness.report.formats import text_table
    from rundir.atomic import write_atomic

    if watch < 0:
        raise HarnessError(f"--watch {watch}: not a number of seconds", hint="e.g. --watch 5")
    while True:
        lines = list_runs(root, reports)
        if not lines:
            typer.echo(f"no runs under {root}")
        else:
            typer.echo(text_table(COLUMNS, [line.cells() for line in lines]))
        if html is not None:
            write_atomic(html, index_page(lines, root, html))
            typer.echo(f"wrote {html}")
        if not watch:
            return
        time.sleep(watch)
