"""A run's verdict matches its outcomes: an arm that completed no turn, or failed more of its turns
than the study's `[verdict] max_failure_rate`, fails the run (exit 1, "FAILED: arm ..." with its
first error); failures within the ceiling stay outcomes. The summary and the report give each
arm's outcomes, and the report lists the calls that belong to no turn."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from harness.checks.arm_verdict import arm_failures, one_line, per_arm
from rundir.turns.turns import TurnRecord
from tests.helpers.report_runs import call, turn, write_run
from tests.helpers.studies import harness, header, only_run, toy_arm, write_study

HOSTILE_ERROR = "engine down <img src=x onerror=alert(9)>"


def turns_of(arm: str, *outcomes: str) -> list[TurnRecord]:
    # Not validated: an outcome a later harness adds must be counted too.
    return [
        TurnRecord.model_construct(
            run="r", item=f"i{n}", arm=arm, turn=0, text="", outcome=outcome,
            error=None if outcome == "done" else f"{outcome} number {n}", memory_miss=None,
        )
        for n, outcome in enumerate(outcomes)
    ]  # fmt: skip


def test_an_arm_that_completed_no_turn_fails_whatever_the_ceiling() -> None:
    arms = per_arm(turns_of("broken", "error", "cut", "resource_limit") + turns_of("ok", "done"))
    assert arms["broken"].outcomes == Counter({"error": 1, "cut": 1, "resource_limit": 1})
    failed = arm_failures(arms, max_failure_rate=1.0)
    assert list(failed) == ["broken"]
    assert failed["broken"].startswith("completed no turn of 3 (cut 1, error 1, resource_limit 1)")
    assert failed["broken"].endswith("first: item i0 turn 0: error: error number 0")


@pytest.mark.parametrize(
    ("outcomes", "ceiling", "fails"),
    [
        (("done", "done", "error"), 0.5, False),  # 1 of 3: within
        (("done", "error", "error"), 0.5, True),  # 2 of 3: above
        (("done", "done", "error"), 0.0, True),  # no failure allowed
        (("done", "cut", "cut", "cut"), 0.75, False),  # exactly at the ceiling: within
        (("done", "infra_failed", "stray_connection"), 0.0, False),  # not the arm's (own rules)
        (("done", "some_new_outcome"), 0.0, False),  # an outcome it does not know: counted only
    ],
)
def test_failures_above_the_ceiling_fail_the_run(
    outcomes: tuple[str, ...], ceiling: float, fails: bool
) -> None:
    arms = per_arm(turns_of("a", *outcomes))
    assert ("a" in arm_failures(arms, ceiling)) is fails
    assert sum(arms["a"].outcomes.values()) == len(outcomes)


def test_an_arms_text_is_one_terminal_line() -> None:
    assert one_line("a\nb\x1b[2Jc") == "a\\nb\\x1b[2Jc"
    assert len(one_line("x" * 1000)) == 160


# --- through the CLI -------------------------------------------------------------------------

ITEMS = [
    {"id": "first", "clock": "2024-05-01T10:00:00", "turns": [{"user": "echo a"}]},
    {"id": "second", "clock": "2024-05-01T10:00:00", "turns": [{"user": "fail boom"}]},
    {"id": "third", "clock": "2024-05-01T10:00:00", "turns": [{"user": "echo c"}]},
]


def record(folder: Path, arms: dict[str, dict[str, Any]], **fields: Any) -> tuple[Any, Path]:
    study = write_study(folder, arms, ITEMS, **fields)
    runs = folder / "runs"
    done = harness("record", str(study), "--run-dir", str(runs), "--isolation", "local")
    return done, only_run(runs)


@pytest.mark.integration
def test_an_arm_whose_every_turn_errors_fails_the_run_by_name(tmp_path: Path) -> None:
    done, run_dir = record(
        tmp_path / "study", {"steady": toy_arm(), "broken": toy_arm(TOY_FAIL_ALL=HOSTILE_ERROR)}
    )
    assert done.returncode == 1, done.stdout + done.stderr[-3000:]
    assert f"run {run_dir.name}: FAILED" in done.stdout
    failed = [line for line in done.stdout.splitlines() if "FAILED: arm" in line]
    assert len(failed) == 1, done.stdout
    assert failed[0].startswith("  FAILED: arm 'broken' completed no turn of 3 (error 3)")
    assert "first: item " in failed[0] and "engine down" in failed[0]
    assert "    broken: error 3" in done.stdout and "    steady: done 2, error 1" in done.stdout
    study = header(run_dir)["study"]
    assert study["passed"] is False
    assert study["arm_outcomes"] == {"broken": {"error": 3}, "steady": {"done": 2, "error": 1}}
    assert list(study["arm_failures"]) == ["broken"] and study["max_failure_rate"] == 0.5

    out = tmp_path / "report"
    made = harness("report", str(run_dir), "--out", str(out), "--format", "md")
    assert made.returncode == 0, made.stderr[-3000:]
    # The terminal table: turns, done, cut, error, limit (resource_limit), infra.
    line = next(x for x in made.stdout.splitlines() if x.startswith("broken "))
    assert line.split()[1:7] == ["3", "0", "0", "3", "0", "0"], made.stdout
    arms = (out / "report.md").read_text().split("\n## 3 ")[1].split("\n## 4 ")[0]
    table = arms.split("\n| arm | turns | done | cut | error | infra_failed |")[1].split("\n\n")[0]
    broken = next(line for line in table.splitlines() if line.startswith("| broken |"))
    assert broken.startswith("| broken | 3 | 0 | 0 | 3 | 0 | 0 | 0 | 0 |")
    assert "FAILS the run: completed no turn of 3 (error 3)" in broken
    assert "onerror=alert(9)" in broken and "<img" not in broken  # the arm's text, escaped
    steady = next(line for line in table.splitlines() if line.startswith("| steady |"))
    assert steady.startswith("| steady | 3 | 2 | 0 | 1 |") and steady.endswith("| ok |")


@pytest.mark.integration
def test_failures_within_the_studys_ceiling_stay_outcomes(tmp_path: Path) -> None:
    done, run_dir = record(tmp_path / "within", {"a": toy_arm()})
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert "    a: done 2, error 1" in done.stdout and "FAILED" not in done.stdout
    assert header(run_dir)["study"]["arm_outcomes"] == {"a": {"done": 2, "error": 1}}

    done, run_dir = record(tmp_path / "strict", {"a": toy_arm()}, verdict={"max_failure_rate": 0.2})
    assert done.returncode == 1, done.stdout + done.stderr[-3000:]
    assert (
        "FAILED: arm 'a' 1 of 3 turns failed (done 2, error 1), above the study's " in done.stdout
    )
    assert "max_failure_rate 0.2; first: item " in done.stdout


@pytest.mark.integration
def test_the_report_lists_each_arms_calls_outside_any_turn(tmp_path: Path) -> None:
    run = "r-late"
    calls = [
        call(run, 1, "a", "x", 0, cost="0.01"),
        call(run, 2, "a", None, None, cost="0.5", purpose="late"),
        call(run, 3, "b", "x", None, cost="0.25", purpose="teardown"),
        call(run, 4, "b", "x", 0),
    ]
    turns = [turn(run, "a", "x", 0), turn(run, "b", "x", 0)]
    run_dir = write_run(tmp_path, run, ["a", "b"], turns, calls)
    out = tmp_path / "out"
    done = harness("report", str(run_dir), "--out", str(out), "--format", "md")
    assert done.returncode == 0, done.stderr[-3000:]
    arms = (out / "report.md").read_text().split("\n## 3 ")[1].split("\n## 4 ")[0]
    rows = [line for line in arms.splitlines() if line.startswith(("| a | r-late", "| b | r-late"))]
    assert len(rows) == 2, arms
    assert rows[0].startswith("| a | r-late | 2 | ") and "| late | gpt-4.1-mini | 200 |" in rows[0]
    assert rows[0].endswith("| ok | $0.5 |")
    assert rows[1].startswith("| b | r-late | 3 | ") and rows[1].endswith("| ok | $0.25 |")
    assert "2 call(s) made while none of their arm's turns ran" in arms
