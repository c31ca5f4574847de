"""The `harness` command line."""

from __future__ import annotations

import sys

import typer

from harness.cli.lazy import Lazy, lazy_group, typer_app
from rundir.errors import UserError

# Every command, in the order `harness --help` lists them: name, where it lives, its one-line
# help. A command's module is imported only when that command runs, so `harness --help` and
# every command pay only for what they use (tests/cli/test_cli.py checks each line here
# against the command's own docstring). Add a command by adding its line.
COMMANDS = (
    Lazy(
        "record",
        "harness.cli.study:record",
        "Run a study in record mode: every model call answered by stubs, free.",
    ),
    Lazy(
        "live",
        "harness.cli.study:live",
        "Run a study against the real vendors, metered and capped (after a clean record run).",
    ),
    Lazy(
        "pilot",
        "harness.cli.pilot:pilot",
        "Run the live pilot's legs under one ledger stage: legs dropped in the fixed order (never "
        "the first five) when the projection passes the cap; writes unit_costs.json.",
    ),
    Lazy(
        "probe",
        "harness.cli.probe:probe",
        "Probe Anthropic's OpenAI-compatible route (a valid call, `thinking` and effort "
        "honoured); write probe.json (route compat, or messages as a fallback the report prints "
        "as a deviation).",
    ),
    Lazy(
        "merge",
        "harness.cli.study:merge",
        "Join the shards of one study run into one run directory (refuses a missing, edited or "
        "foreign shard, naming it). A folder of runs gives, per shard, its latest run that "
        "passed.",
    ),
    Lazy(
        "replay",
        "harness.cli.replay:replay",
        "Replay a recorded run with no key and no network; exit 1 on any divergence or miss.",
    ),
    Lazy(
        "cleanup",
        "harness.cli.study:cleanup",
        "Stop what a crashed run left behind: processes (pids.json), containers, networks, "
        "iptables rules (by their harness.run label), of the runs under --run-dir only.",
    ),
    Lazy(
        "gate",
        "harness.cli.check:gate",
        "Run the study twice in record mode and check both runs sent the same requests.",
    ),
    Lazy(
        "audit",
        "harness.cli.check:audit",
        "Recompute every cost and hash of a run and check them against its ledger.",
    ),
    Lazy(
        "judge",
        "harness.cli.judge:judge",
        "Judge runs with pinned judges (planted controls, both orders, sealed arm codes, "
        "repeats, A/A) into a judgment set; exits 1 unless every axis passed.",
    ),
    Lazy(
        "report",
        "harness.cli.report:report",
        "Write the study report (13 sections; markdown, HTML, PDF) with report.json and "
        "records.jsonl into --out, from the runs' files and the optional inputs; calls no model.",
    ),
    Lazy(
        "runs",
        "harness.cli.runs:runs",
        "List the runs under a folder: study, mode, status, items done of planned, a headline "
        "and the report; --html writes a static index page. Reads the files only.",
    ),
    Lazy(
        "scan",
        "harness.cli.scan:scan",
        "Search every request and response body, turn text and exported store of a run for "
        "canary tokens and forgotten words. Exits 1 when a canary served before its event voids "
        "an arm.",
    ),
    Lazy(
        "items",
        "harness.cli.items:items",
        "Print the items a study runs (a memory benchmark's drawn questions) and the counts per "
        "stratum; reads the files only, starts nothing.",
    ),
    Lazy(
        "void",
        "harness.cli.void:void",
        "Void items of a run in every arm (a harness defect found after it), with a dated reason.",
    ),
    Lazy(
        "protocol",
        "harness.cli.protocol:protocol_app",
        "The study's protocol: freeze a file (lock its SHA-256), show the lock and the addendum.",
    ),
    Lazy(
        "plan",
        "harness.cli.plan:plan_app",
        "The analysis plan: simulate its decision rule at zero spend before any paid call.",
    ),
    Lazy("proxy", "harness.cli.proxy:proxy_app", "Run the harness proxy on its own."),
    Lazy(
        "ledger",
        "harness.cli.ledger:ledger_app",
        "The durable spend ledger: show, verify, export, settle, reconcile.",
    ),
    Lazy("prices", "harness.cli.ledger:prices_app", "Price tables."),
    Lazy(
        "images",
        "harness.cli.images:images_app",
        "Build and list the Docker images (base, harness-python, harness-arm, harness-proxy).",
    ),
)

app = typer_app(
    help="Run benchmark studies of LLM memory engines and agent arms fairly, cheaply and "
    "verifiably.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    # click caps help at 80 columns; a wider terminal gets its width, as rich's help did.
    context_settings={"max_content_width": 200},
    cls=lazy_group(COMMANDS),
)


@app.callback()
def main(
    log_level: str = typer.Option("info", envvar="HARNESS_LOG_LEVEL", help="debug|info|warning"),
    log_json: bool | None = typer.Option(
        None, "--log-json/--log-console", help="Log format (default: JSON unless on a terminal)."
    ),
) -> None:
    # Imported here: structlog is not needed to print `harness --help`.
    from harness.logging import configure_logging

    configure_logging(level=log_level, json=log_json)


def _help_for(args: list[str]) -> str:
    """`harness COMMAND [SUBCOMMAND] --help` for the command the user ran."""
    words = [a for a in args if not a.startswith("-")][:2]
    names = {c.name for c in COMMANDS}
    if not words or words[0] not in names:
        return "`harness --help`"
    sub = (
        words[1:] if words[0] in {"ledger", "protocol", "plan", "proxy", "prices", "images"} else []
    )
    return f"`harness {' '.join([words[0], *sub])} --help`"


def run() -> None:
    """Entry point: user errors print one message and exit 2, never a traceback."""
    try:
        # standalone_mode=False returns a command's exit code instead of exiting with it.
        code = app(standalone_mode=False)
    except UserError as e:  # HarnessError, or RunDirError from a run file's reader (rundir/)
        print(f"harness: error: {e}", file=sys.stderr)
        if not e.hint:  # every error says what to do: at least where the options are described
            print(f"  hint: {_help_for(sys.argv[1:])} says what each option takes", file=sys.stderr)
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
