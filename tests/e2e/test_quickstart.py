"""The README's first command (`./scripts/quickstart`) runs the quickstart study end to end in
record mode with the local backend (its speed is bench/'s: a test asserts no wall-clock bound a
loaded machine breaks)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.helpers.studies import REPO, header, only_run, read_jsonl

pytestmark = pytest.mark.integration

QUICKSTART = REPO / "examples" / "quickstart" / "study.toml"


def test_the_readme_first_command_runs_the_quickstart_end_to_end(tmp_path: Path) -> None:
    # The command itself (it checks .venv first), forced local; tests/docker runs it on docker.
    done = subprocess.run(
        [str(REPO / "scripts" / "quickstart"), "--run-dir", str(tmp_path), "--isolation", "local"],
        cwd=REPO,
        env={**os.environ, "HARNESS_NO_PROGRESS": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert "passed" in done.stdout and "isolation: local" in done.stdout
    run_dir = only_run(tmp_path)
    run = header(run_dir)["study"]
    assert run["passed"] and run["arms"] == ["bare", "retrieval"] and run["items"] == 3
    turns = read_jsonl(run_dir / "turns.jsonl")
    assert len(turns) == 3 * 3 * 2 and {t["outcome"] for t in turns} == {"done"}
    calls = read_jsonl(run_dir / "calls.jsonl")
    # Every call is attributed to the arm (by its listener) and the item and turn it ran in.
    assert {c["arm"] for c in calls} == {"bare", "retrieval"}
    assert all(c["item"] in {"lisbon", "garden", "trip"} and c["turn"] in {0, 1, 2} for c in calls)
    assert {c["purpose"] for c in calls} == {"main", "embedding"}
    assert (run_dir / "egress.jsonl").read_text() == ""
