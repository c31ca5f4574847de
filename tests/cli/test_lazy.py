"""harness/cli/lazy.py's `typer_app`: every Typer of the command line prints click's plain help,
so `harness --help` never imports rich (its renderers were half of the start-up time)."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys

import pytest
import typer
from typer.core import TyperCommand, TyperGroup

import harness.cli
from harness.cli.lazy import typer_app


def test_every_typer_made_in_harness_cli_has_the_plain_markup() -> None:
    """A module-level `typer.Typer(...)` written without the factory gets typer's default, rich:
    this walks every module of harness/cli, so such a group fails here."""
    modules = ["harness.cli"]
    for module_info in pkgutil.iter_modules(harness.cli.__path__, "harness.cli."):
        if module_info.name != "harness.cli.__main__":  # importing that one runs the command line
            modules.append(module_info.name)
    found: dict[str, object] = {}
    for module_name in modules:
        for name, value in vars(importlib.import_module(module_name)).items():
            if isinstance(value, typer.Typer):
                found[f"{module_name}:{name}"] = value.rich_markup_mode
    # The walk saw the groups it must see, the root included.
    assert {
        "harness.cli:app",
        "harness.cli.proxy:proxy_app",
        "harness.cli.ledger:ledger_app",
        "harness.cli.ledger:prices_app",
        "harness.cli.images:images_app",
    } <= found.keys()
    assert {where: mode for where, mode in found.items() if mode is not None} == {}


def test_every_command_loaded_through_the_table_has_the_plain_markup() -> None:
    """What the user runs: each command as the lazy table builds it (a lone command function is
    wrapped in a Typer of its own) and each subcommand of a group."""
    from harness.cli import COMMANDS

    wrong = []
    for entry in COMMANDS:
        command = entry.load()
        commands = [(entry.name, command)]
        if isinstance(command, TyperGroup):
            commands += [(f"{entry.name} {n}", c) for n, c in command.commands.items()]
        for name, each in commands:
            assert isinstance(each, TyperCommand | TyperGroup), name
            if each.rich_markup_mode is not None:
                wrong.append(name)
    assert wrong == []


def test_markup_cannot_be_overridden_by_a_caller() -> None:
    with pytest.raises(TypeError, match="rich_markup_mode"):
        typer_app(help="x", rich_markup_mode="rich")


@pytest.mark.integration
def test_help_imports_no_rich() -> None:
    """`python -X importtime` lists every module the interpreter imported, so rich pulled in by
    any route (typer's rich help, a stray import) shows."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "harness.cli", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    # Lines read "import time: self | cumulative | module", nested imports indented.
    imported = [line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()]
    assert "typer" in imported  # the listing is there at all
    assert [name for name in imported if name.split(".")[0] == "rich"] == []
