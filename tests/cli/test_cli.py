"""The command line: user errors print one short message and exit 2, never a traceback; `harness
--help` lists every command from the table in harness/cli/__init__.py without importing any of
them."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from tests.helpers.studies import harness

pytestmark = pytest.mark.integration


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("record", "--bogus", "study.toml"), "No such option: --bogus"),
        (("record",), "Missing argument"),
        (("ledger", "nonsense"), "No such command"),
    ],
)
def test_usage_errors_print_a_short_message_and_no_traceback(
    args: tuple[str, ...], message: str
) -> None:
    done = harness(*args)
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) <= 4, done.stderr


# What `harness --help` must not load: each costs tenths of a second, and only the command that
# uses it should pay (issue 11: `harness --help` under 0.35 s).
HEAVY = (
    *("pydantic", "ledger", "docker", "cryptography", "anthropic", "openai", "mitmproxy"),
    *("structlog", "proxy", "stubs", "numpy", "scipy", "httpx", "harness.study"),
)


def test_help_lists_every_command_with_its_one_line_help() -> None:
    from harness.cli import COMMANDS

    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "COLUMNS": "400"},  # one row per command, nothing wrapped
    )
    assert done.returncode == 0, done.stderr
    # The rows after the "Commands" heading: a name, then its help (rich draws a box around).
    rows = done.stdout.split("Commands", 1)[1].splitlines()[1:]
    listed = {}
    for line in rows:
        cells = line.strip("│ ").split(maxsplit=1)
        if len(cells) == 2:
            listed[cells[0]] = " ".join(cells[1].split())
    assert listed == {entry.name: entry.help for entry in COMMANDS}


def test_the_table_says_what_each_command_says_of_itself() -> None:
    """The table's line is what the command's own docstring (or its group's help) says, so the
    list cannot drift from `harness COMMAND --help`."""
    from harness.cli import COMMANDS

    for entry in COMMANDS:
        command = entry.load()
        assert command.name == entry.name
        first_paragraph = (command.help or "").split("\n\n")[0]
        assert " ".join(first_paragraph.split()) == entry.help, entry.name


def test_help_imports_none_of_the_commands_heavy_modules() -> None:
    probe = (
        "import sys\n"
        "sys.argv = ['harness', '--help']\n"
        "from harness.cli import run\n"
        "try:\n"
        "    run()\n"
        "except SystemExit as e:\n"
        "    assert e.code == 0, e.code\n"
        "print(' '.join(sorted(sys.modules)), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    loaded = set(done.stderr.split())
    assert "typer" in loaded  # the probe saw the modules at all
    assert [m for m in HEAVY if m in loaded or any(n.startswith(m + ".") for n in loaded)] == []


def test_every_command_is_reached_through_the_table() -> None:
    """Each command (and each subcommand of a group) parses its options once loaded."""
    from harness.cli import COMMANDS, app

    runner = CliRunner()
    for entry in COMMANDS:
        done = runner.invoke(app, [entry.name, "--help"])
        assert done.exit_code == 0, (entry.name, done.output)
        assert f"harness {entry.name}" in done.output or f"{entry.name} [OPTIONS]" in done.output
    done = runner.invoke(app, ["ledger", "open-stage", "--help"])
    assert done.exit_code == 0 and "--cap" in done.output


def test_a_misspelt_command_is_refused_with_a_suggestion() -> None:
    done = harness("recrd")
    assert done.returncode == 2
    assert "No such command 'recrd'. Did you mean 'record'?" in done.stderr
    assert "Traceback" not in done.stderr


def test_loading_a_study_imports_no_vendor_sdk() -> None:
    probe = "import sys, harness.study; print(' '.join(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    loaded = set(done.stdout.split())
    assert {"harness.study"} <= loaded
    assert [m for m in loaded if m.split(".")[0] in ("anthropic", "openai", "cohere")] == []
