"""The runs a report reads: a stopped run and its resume read as one study, and damaged run
files refused with one line that says what to do."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from tests.helpers.report_runs import call, turn, write_run
from tests.helpers.studies import harness

pytestmark = pytest.mark.integration


def test_a_run_and_its_resume_read_as_one_study(tmp_path: Path) -> None:
    first = write_run(
        tmp_path,
        "r-first",
        ["a", "b"],
        [
            turn("r-first", "a", "x", 0),
            turn("r-first", "b", "x", 0),
            turn("r-first", "a", "y", 0, outcome="infra_failed"),
            turn("r-first", "b", "y", 0),
        ],
        [call("r-first", 1, "a", "y", 0, cost="0.5")],
    )
    # The resume re-ran exactly the pair the first run did not finish (its header names the run
    # it resumes, as `--resume` writes it; two unrelated runs are refused: test_crosscheck.py).
    resumed = write_run(
        tmp_path, "r-resume", ["a", "b"], [turn("r-resume", "a", "y", 0)],
        [call("r-resume", 1, "a", "y", 0, cost="0.25")], resumed_from=first,
    )  # fmt: skip
    out = tmp_path / "out"
    done = harness("report", str(first), str(resumed), "--json", "--out", str(out))
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report["run_ids"] == ["r-first", "r-resume"]
    assert report["dropped_items"] == []
    assert report["arms"]["a"]["outcomes"] == {"done": 2}
    # Both runs' spend counts: the failed attempt cost money too.
    assert Decimal(report["arms"]["a"]["cost_usd"]) == Decimal("0.75")
    alone = harness("report", str(first), "--json", "--out", str(tmp_path / "alone"))
    assert json.loads(alone.stdout)["dropped_items"] == ["y"]


@pytest.mark.parametrize(
    ("name", "line"),
    [
        ("calls.jsonl", '{"schema": 1, "run_id": "r"}\n'),
        ("turns.jsonl", '{"schema": 1, "run": "r", "item": "x"}\n'),
        ("egress.jsonl", "{not json\n"),
    ],
)
def test_a_damaged_run_file_is_refused_in_one_line(tmp_path: Path, name: str, line: str) -> None:
    run_dir = write_run(tmp_path, "r", ["a"], [turn("r", "a", "x", 0)], [call("r", 1, "a", "x", 0)])
    with open(run_dir / name, "a") as f:
        f.write(line)
    done = harness("report", str(run_dir), "--out", str(tmp_path / "out"))
    assert done.returncode == 2, done.stderr
    assert f"{run_dir / name}" in done.stderr and "does not parse" in done.stderr
    assert "harness audit" in done.stderr and "Traceback" not in done.stderr
