"""README's command table: one row for every command `harness --help` reaches (a group's
subcommands each have their own), no row for a command that does not exist, and every row's
example parses with that command's own parser, so the front door cannot drift from the CLI."""

from __future__ import annotations

import re
import shlex
from typing import Any

import pytest
from typer.main import get_command

from harness.cli import app
from tests.helpers.studies import REPO

ROW = re.compile(r"^\| `(?P<name>[a-z][a-z -]*)` \| [^|]+ \| `(?P<example>harness [^`]+)` \|$")


def readme_rows() -> dict[str, str]:
    """Command path ("ledger show") -> its example, from the table under README's "## Commands"."""
    text = (REPO / "README.md").read_text()
    section = text.split("\n## Commands\n", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, str] = {}
    for line in section.splitlines():
        if not line.startswith("| `"):
            continue
        found = ROW.match(line)
        assert found, f"README command row not in the form | `name` | what | `example` |: {line}"
        assert found["name"] not in rows, f"README lists {found['name']!r} twice"
        rows[found["name"]] = found["example"]
    return rows


def leaf_commands() -> dict[str, Any]:
    """Every command a user can run, by its path: a group's subcommands, not the group."""
    root = get_command(app)
    context = root.context_class(root, info_name="harness")
    leaves: dict[str, Any] = {}

    def walk(command: Any, path: list[str]) -> None:
        if hasattr(command, "list_commands"):
            for name in command.list_commands(context):
                walk(command.get_command(context, name), [*path, name])
        else:
            leaves[" ".join(path)] = command

    walk(root, [])
    return leaves


def parse_example(example: str, leaves: dict[str, Any]) -> None:
    """Parse `example` with its command's own click parser (options, arguments, types); raises
    click's usage error on an unknown option, a missing argument or a bad value."""
    words = shlex.split(example)
    assert words[0] == "harness", example
    root = get_command(app)
    parent = root.context_class(root, info_name="harness")
    for depth in (2, 1):
        path = " ".join(words[1 : 1 + depth])
        if path in leaves:
            command = leaves[path]
            command.make_context(path, words[1 + depth :], parent=parent)
            return
    raise AssertionError(f"no command of harness runs {example!r}")


def test_every_command_has_a_row_and_every_row_a_command() -> None:
    rows, leaves = readme_rows(), leaf_commands()
    missing = sorted(set(leaves) - set(rows))
    assert not missing, f"commands with no row in README's command table: {missing}"
    unknown = sorted(set(rows) - set(leaves))
    assert not unknown, f"README's command table lists commands harness does not have: {unknown}"


def test_every_example_parses_with_its_command() -> None:
    leaves = leaf_commands()
    for name, example in readme_rows().items():
        assert shlex.split(example)[1 : 1 + len(name.split())] == name.split(), (name, example)
        parse_example(example, leaves)


@pytest.mark.parametrize(
    "example",
    [
        "harness record --bogus examples/quickstart/study.toml",  # an option it does not have
        "harness live examples/quickstart/study.toml",  # --cap is required
        "harness ledger open-stage pilot --cap",  # an option without its value
        "harness report RUN --resamples many",  # not an integer
    ],
)
def test_a_wrong_example_is_refused(example: str) -> None:
    # The check above can fail: the parser refuses these as it would on the command line.
    with pytest.raises(Exception, match=r"(?i)option|missing|valid|requires"):
        parse_example(example, leaf_commands())
