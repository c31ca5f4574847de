"""The command line's user errors: one short message and exit code 2, never a traceback."""

from __future__ import annotations

import subprocess
import sys

import pytest


def harness_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", *args], capture_output=True, text=True, timeout=60
    )


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
    done = harness_cli(*args)
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) <= 4, done.stderr
