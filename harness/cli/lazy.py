"""A typer group that imports a command's module only when that command runs.

`harness --help` used to import every command module, and with them pydantic, the ledger, docker,
cryptography and the vendor SDKs: most of a second before a line was printed. Here each command
is a `Lazy` entry (its name, where it lives, its one-line help): the group lists the names and
their help without importing anything, and turns an entry into the real click command on first
use. Every command then parses and behaves exactly as when it was registered eagerly, because it
is built by typer's own converter (`typer.main.get_command` / `get_group`, the documented bridge to
click: https://typer.tiangolo.com/tutorial/using-click/).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import typer
from typer.core import TyperCommand, TyperGroup
from typer.main import get_command, get_group

if TYPE_CHECKING:
    # Typer 0.2x vendors click as typer._click; its Command and Context are what the group holds.
    from typer._click import Command, Context


# Every harness Typer prints click's plain help. typer's rich help imports rich's markdown,
# traceback and table renderers first: 0.19 s of `harness --help`'s 0.38 s on Python 3.13
# (BENCHMARKS.md, "CLI start-up"), for boxes around the same text.
HELP_MARKUP: Literal["markdown", "rich"] | None = None


def typer_app(**settings: Any) -> typer.Typer:
    """A `typer.Typer` with harness's help markup: every Typer of harness/cli is made here, so a
    new command group cannot forget it (typer's default is rich). Passing `rich_markup_mode` is a
    TypeError (given twice), not a silent override."""
    return typer.Typer(rich_markup_mode=HELP_MARKUP, **settings)


@dataclass(frozen=True)
class Lazy:
    """One command of the table: `target` is "module:attribute", a typer command function or a
    `typer.Typer` of subcommands; `help` is what `harness --help` shows for it."""

    name: str
    target: str
    help: str

    def load(self) -> Command:
        module, _, attribute = self.target.partition(":")
        found = getattr(importlib.import_module(module), attribute)
        command: Command
        if isinstance(found, typer.Typer):
            # What app.add_typer(found, name=...) built: a group, no completion options of its own.
            command = get_group(found)
        else:
            single = typer_app(add_completion=False)
            single.command(self.name)(found)
            command = get_command(single)
        command.name = self.name
        return command

    def placeholder(self) -> Command:
        """A stand-in carrying only the name and help, for the group's command list. As its
        short help the line is shown whole (wrapped), not cut to click's 45 characters."""
        return TyperCommand(name=self.name, help=self.help, short_help=self.help)


class LazyCommands(MutableMapping[str, "Command"]):
    """The group's `commands` mapping: names are known up front, a command is built on first
    access and kept. Typer reads `commands` directly (lookups, "did you mean" suggestions), so
    laziness lives here rather than in an override of one method."""

    def __init__(self, table: tuple[Lazy, ...], loaded: dict[str, Command]) -> None:
        self.table = {entry.name: entry for entry in table}
        self.loaded = dict(loaded)

    def __getitem__(self, name: str) -> Command:
        if name not in self.loaded:
            self.loaded[name] = self.table[name].load()
        return self.loaded[name]

    def __setitem__(self, name: str, command: Command) -> None:
        self.loaded[name] = command

    def __delitem__(self, name: str) -> None:
        self.loaded.pop(name, None)
        self.table.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        yield from self.table
        yield from (name for name in self.loaded if name not in self.table)

    def __len__(self) -> int:
        return len(self.table.keys() | self.loaded.keys())

    def __contains__(self, name: object) -> bool:
        return name in self.table or name in self.loaded


class LazyGroup(TyperGroup):
    """The root group. `Typer(cls=LazyGroup)` builds it; `lazy_commands` is set on the class by
    `lazy_group(table)` below, because typer constructs the group itself."""

    lazy_commands: tuple[Lazy, ...] = ()

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.commands = LazyCommands(self.lazy_commands, dict(self.commands))
        self._listing = False

    def list_commands(self, ctx: Context) -> list[str]:
        # TyperGroup's own walks commands.items(), which would build every command.
        return list(self.commands)

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        commands = self.commands
        if (
            self._listing
            and isinstance(commands, LazyCommands)
            and cmd_name in commands.table
            and cmd_name not in commands.loaded
        ):
            return commands.table[cmd_name].placeholder()
        return super().get_command(ctx, cmd_name)

    def format_help(self, ctx: Context, formatter: Any) -> None:
        # Listing the commands asks for each one; while the help is written, a stand-in with the
        # table's help answers instead of importing the command's module.
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False


def lazy_group(table: tuple[Lazy, ...]) -> type[LazyGroup]:
    """A LazyGroup class that holds `table`, for `typer.Typer(cls=...)`."""
    names = [entry.name for entry in table]
    if len(set(names)) != len(names):
        raise ValueError(f"a command name appears twice in the table: {names}")
    return type("HarnessGroup", (LazyGroup,), {"lazy_commands": table})
