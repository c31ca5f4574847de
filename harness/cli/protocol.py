"""`harness protocol freeze STUDY FILE` and `harness protocol show STUDY`: the study's frozen
protocol files and their addendum (harness/protocol/, docs/protocol.md)."""

from __future__ import annotations

from pathlib import Path

import typer

from harness.cli.lazy import typer_app
from harness.cli.options import STUDY_FILE

protocol_app = typer_app(
    help="The study's protocol: freeze a file (lock its SHA-256), show the lock and the addendum.",
    no_args_is_help=True,
)


@protocol_app.command()
def freeze(
    study: Path = STUDY_FILE,
    file: Path = typer.Argument(..., help="A file the study's [protocol] frozen list names."),
) -> None:
    """Lock FILE's SHA-256 and today's date in protocol.lock.json beside the study; from then on
    every run of the study refuses to start if its bytes differ."""
    from harness.protocol import freeze as lock
    from harness.protocol import lock_path
    from harness.study import load_study

    loaded = load_study(study)
    entry, new = lock(loaded, file)
    what = "frozen" if new else "already frozen, unchanged"
    typer.echo(f"{entry.path}: {what} (SHA-256 {entry.sha256}, {entry.frozen})")
    typer.echo(f"  {lock_path(loaded)}: commit it with the study")


@protocol_app.command()
def show(study: Path = STUDY_FILE) -> None:
    """Check the frozen files against their lock (exit 1 on a change, naming it) and list the
    addendum's entries."""
    from harness.protocol import check_protocol, load_addendum
    from harness.study import load_study

    loaded = load_study(study)
    checked = check_protocol(loaded)  # raises, naming the file, on a change
    if checked is None:
        typer.echo(f"{study}: no [protocol] table")
        return
    for frozen in checked.record.frozen:
        typer.echo(f"frozen {frozen.path}: SHA-256 {frozen.sha256} (frozen {frozen.frozen})")
    record = checked.record
    if record.addendum is None:
        typer.echo("no addendum")
        return
    typer.echo(f"addendum {record.addendum}: SHA-256 {record.addendum_sha256}")
    for entry in load_addendum(loaded.path.parent / record.addendum).entry:
        why = f" (reason: {entry.reason})" if entry.reason else ""
        typer.echo(f"  {entry.when} {entry.kind}: {entry.text}{why}")
