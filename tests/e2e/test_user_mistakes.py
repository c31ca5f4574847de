"""Plausible user mistakes across the commands: each exits 2 with a one-line error and a hint,
never a traceback, and starts nothing (issue 38 item 8). One parametrised case per mistake, so a
command that regresses is named."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.studies import REPO, harness

pytestmark = pytest.mark.integration

QUICKSTART = str(REPO / "examples" / "quickstart" / "study.toml")
MISTAKES = [
    ("record", "nosuch.toml"),
    ("record", QUICKSTART, "--isolation", "vm"),
    ("record", QUICKSTART, "--shard", "3/2"),
    ("record", QUICKSTART, "--workers", "0"),
    ("gate", "nosuch.toml"),
    ("live", "nosuch.toml", "--cap", "10"),
    ("items", "nosuch.toml"),
    ("report",),
    ("report", "nosuch"),
    ("report", "RUNS", "--resamples", "0"),
    ("report", "RUNS", "--format", "docx"),
    ("report", "RUNS", "--paper", "a3"),
    ("replay", "nosuch"),
    ("audit", "nosuch"),
    ("void", "nosuch", "--items", "a", "--reason", "b"),
    ("merge", "nosuch-a", "nosuch-b", "--out", "merged"),
    ("cleanup", "--run-dir", "nosuch"),
    ("runs", "nosuch"),
    ("plan", "simulate", "nosuch.toml"),
    ("protocol", "show", "nosuch.toml"),
    ("ledger", "show", "--ledger", "nosuch/ledger.jsonl"),
]


@pytest.mark.parametrize("args", MISTAKES, ids=lambda a: " ".join(a) or "none")
def test_a_mistake_is_one_line_with_a_hint(args: tuple[str, ...], tmp_path: Path) -> None:
    # "RUNS" stands for a folder that holds no run (an empty one): a run directory it is not.
    given = [str(tmp_path / "empty") if a == "RUNS" else a for a in args]
    (tmp_path / "empty").mkdir()
    done = harness(*given, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines[0].startswith("harness: error: "), lines
    assert any(line.strip().startswith("hint:") for line in lines[1:]), lines
    assert len(lines) <= 3, lines
    assert not (tmp_path / "runs").exists()  # nothing was started or written
