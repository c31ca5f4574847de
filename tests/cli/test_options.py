"""harness.cli.options: the options several commands share read the same in each, and
`--isolation` is checked once, refused in one line with a hint."""

from __future__ import annotations

import pytest

from harness.cli.options import isolation_choice
from harness.errors import HarnessError


def test_isolation_choice_takes_the_backends_and_refuses_anything_else() -> None:
    assert [isolation_choice(v) for v in ("auto", "docker", "local")] == ["auto", "docker", "local"]
    with pytest.raises(HarnessError) as refused:
        isolation_choice("podman")
    assert "--isolation 'podman' is not one of auto, docker, local" in str(refused.value)
    assert refused.value.hint


# Options of the same name that mean something else: replay's run root defaults to its source's.
OWN = {("replay", "--run-dir")}


@pytest.mark.parametrize("flag", ["--isolation", "--run-dir"])
def test_a_shared_option_has_one_help_text_in_every_command(flag: str) -> None:
    from harness.cli import COMMANDS

    helps = {}
    for entry in COMMANDS:
        for param in getattr(entry.load(), "params", []):
            if flag in param.opts and (entry.name, flag) not in OWN:
                helps[entry.name] = param.help
    assert {"record", "live"} <= helps.keys()
    assert len(set(helps.values())) == 1, helps
