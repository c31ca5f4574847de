"""The quickstart study runs end to end in record mode with the local backend, as the README's
first command does (`./scripts/quickstart`), well inside two minutes."""

from __future__ import annotations

import time
from pathlib import Path

from tests.harness.studies import REPO, harness, header, only_run, read_jsonl

QUICKSTART = REPO / "examples" / "quickstart" / "study.toml"
BUDGET_S = 120


def test_the_quickstart_runs_end_to_end(tmp_path: Path) -> None:
    started = time.monotonic()
    done = harness("record", str(QUICKSTART), "--run-dir", str(tmp_path), "--isolation", "local")
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stderr[-3000:]
    assert elapsed < BUDGET_S
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
