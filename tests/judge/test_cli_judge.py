"""`harness judge` on the command line: a stage's table and exit code, `--verify`, user errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.judge.runs import judge_entry, write_judges, write_rubrics, write_run, write_study


def harness(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", "--log-level", "warning", *args],
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("judge",), "judging needs run directories, --rubrics, --judges and --out"),
        (
            ("judge", "nowhere", "--rubrics", "r", "--judges", "j.toml", "--out", "o"),
            "--rubrics r is not a folder",
        ),
        (("judge", "--verify", "nowhere"), "nowhere is not a judgment set"),
    ],
)
def test_user_errors_are_one_line(args: tuple[str, ...], message: str, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode in (1, 2)
    assert message in done.stdout + done.stderr
    assert "Traceback" not in done.stderr


def test_a_stage_prints_its_bars_and_exits_1_when_an_axis_is_short(tmp_path: Path) -> None:
    study = write_study(tmp_path / "study", items=3)
    run = write_run(tmp_path / "runs", study, "run-a")
    judges = write_judges(
        tmp_path / "judges.toml", alpha=judge_entry("rules-a"), beta=judge_entry("rules-b")
    )
    out = tmp_path / "set"
    done = harness(
        "judge",
        str(run),
        "--rubrics",
        str(write_rubrics(tmp_path / "rubrics")),
        "--judges",
        str(judges),
        "--out",
        str(out),
        "--controls-per-kind",
        "3",
        "--seed",
        "4",
    )
    # No A/A sample was given: the pairwise axis is incomplete, so the stage is not a pass.
    assert done.returncode == 1, done.stderr
    assert "axis grounded: PASSED" in done.stdout
    assert "axis better_reply: INCOMPLETE" in done.stdout
    assert "A/A control not run" in done.stdout
    assert f"sealed {tmp_path / 'set.seal.json'}" in done.stdout
    checked = harness("judge", "--verify", str(out))
    assert checked.returncode == 0 and checked.stdout.strip().endswith("0 problem(s)")
    opened = harness("judge", "--open", str(out))
    assert opened.returncode == 0, opened.stderr
    outcomes = json.loads(opened.stdout)
    assert outcomes["axes"] == {"better_reply": "incomplete", "grounded": "passed"}
    assert {o["arm"] for o in outcomes["flags"]} == {"bare", "retrieval"}
    (tmp_path / "other.seal.json").write_text("{}")
    refused = harness("judge", "--open", str(out), "--seal", str(tmp_path / "other.seal.json"))
    assert refused.returncode == 2 and "is not the seal of" in refused.stderr
    (out / "tasks.jsonl").write_text(
        (out / "tasks.jsonl").read_text().replace('"rubric":"grounded"', '"rubric":"other"', 1)
    )
    checked = harness("judge", "--verify", str(out))
    assert (
        checked.returncode == 1
        and "tasks.jsonl is not the file the manifest hashed" in checked.stdout
    )
