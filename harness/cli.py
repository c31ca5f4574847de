"""The `harness` command line."""

from __future__ import annotations

import sys

import typer

from harness.check_cmd import audit, gate
from harness.errors import HarnessError
from harness.images_cmd import images_app
from harness.ledger_cmd import ledger_app, prices_app
from harness.logging import configure_logging
from harness.proxy_cmd import proxy_app
from harness.replay_cmd import replay
from harness.report_cmd import report
from harness.scan_cmd import scan
from harness.study_cmd import cleanup, live, record

app = typer.Typer(
    help="Run benchmark studies of LLM memory engines and agent arms fairly, cheaply and "
    "verifiably.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.add_typer(proxy_app, name="proxy")
app.add_typer(ledger_app, name="ledger")
app.add_typer(prices_app, name="prices")
app.add_typer(images_app, name="images")
for command in (record, live, replay, cleanup):
    app.command()(command)
app.command()(gate)
app.command()(audit)
app.command()(report)
app.command()(scan)


@app.callback()
def main(
    log_level: str = typer.Option("info", envvar="HARNESS_LOG_LEVEL", help="debug|info|warning"),
    log_json: bool | None = typer.Option(
        None, "--log-json/--log-console", help="Log format (default: JSON unless on a terminal)."
    ),
) -> None:
    configure_logging(level=log_level, json=log_json)


def run() -> None:
    """Entry point: user errors print one message and exit 2, never a traceback."""
    try:
        # standalone_mode=False returns a command's exit code instead of exiting with it.
        code = app(standalone_mode=False)
    except HarnessError as e:
        print(f"harness: error: {e}", file=sys.stderr)
        sys.exit(2)
    except typer.Abort:
        sys.exit(130)
    except Exception as e:
        # Usage errors (an unknown option, a missing argument): click's message and exit code,
        # no traceback. Newer typer vendors click (typer._click), whose exceptions derive from
        # typer.TyperException rather than click.ClickException, so both are recognised.
        import click

        show = getattr(e, "show", None)
        if isinstance(e, click.ClickException | typer.TyperException) and callable(show):
            show()
            sys.exit(int(getattr(e, "exit_code", 2)))
        raise
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    run()
