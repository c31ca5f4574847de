"""The report reads the study's output guard (harness/report/figures/guard_tally.py): per arm, the
turns the guard passed, failed or could not judge, and its own calls and their cost, in report.json
and in section 3; a run without a guard shows none."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from tests.helpers.report_runs import call, turn, write_run
from tests.helpers.studies import harness

pytestmark = pytest.mark.integration


def test_each_arms_verdicts_and_guard_calls_are_reported(tmp_path: Path) -> None:
    run = "r-guard"
    turns = [turn(run, "a", f"i{n}", 0) for n in range(4)] + [turn(run, "b", "i0", 0)]
    for t, verdict in zip(turns, ["pass", "pass", "fail", "error", "fail"], strict=True):
        t.guard = verdict  # type: ignore[assignment]
    calls = [call(run, 1, "a", "i0", 0), call(run, 2, "a", "i0", 0, cost="0.25", purpose="guard")]
    calls.append(call(run, 3, "b", "i0", 0, cost="0.5", purpose="guard"))
    run_dir = write_run(tmp_path, run, ["a", "b"], turns, calls)
    out = tmp_path / "out"
    done = harness("report", str(run_dir), "--json", "--out", str(out), "--resamples", "200")
    assert done.returncode == 0, done.stderr[-3000:]
    arms = json.loads(done.stdout)["arms"]
    a, b = arms["a"]["guard"], arms["b"]["guard"]
    assert (a["passed"], a["failed"], a["errored"], a["unjudged"]) == (2, 1, 1, 0)
    assert (a["calls"], Decimal(a["cost_usd"])) == (1, Decimal("0.25"))
    assert (b["passed"], b["failed"], b["calls"], Decimal(b["cost_usd"])) == (
        0,
        1,
        1,
        Decimal("0.5"),
    )
    text = "\n".join(p.read_text() for p in out.rglob("*.md"))
    assert "| guard passed | guard failed | guard error |" in text
    assert "| a | 2 | 1 | 1 | 0 | 1 | $0.25 |" in text


def test_a_run_without_a_guard_reports_none(tmp_path: Path) -> None:
    run = "r-plain"
    run_dir = write_run(
        tmp_path, run, ["a"], [turn(run, "a", "i0", 0)], [call(run, 1, "a", "i0", 0)]
    )
    out = tmp_path / "out"
    done = harness("report", str(run_dir), "--json", "--out", str(out), "--resamples", "200")
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout)["arms"]["a"]["guard"] is None
    assert "guard passed" not in "\n".join(p.read_text() for p in out.rglob("*.md"))
