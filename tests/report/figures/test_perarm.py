"""report.json's per-arm figures: cut turns rank above completed ones, an item that failed for
infrastructure reasons on one arm is dropped from every arm, money is never dropped."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from rundir.calls.calllog import CallRecord
from rundir.turns.turns import TurnRecord
from tests.helpers.report_runs import call, turn, write_run
from tests.helpers.studies import harness

pytestmark = pytest.mark.integration


def report_json(run_dir: Path, out: Path) -> dict[str, Any]:
    done = harness("report", str(run_dir), "--json", "--out", str(out), "--resamples", "200")
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(json.loads(done.stdout))


def test_turns_cut_at_the_deadline_rank_above_every_completed_turn(tmp_path: Path) -> None:
    run = "r-cut"
    turns = [turn(run, "steady", f"i{n}", 0, last=2.0 + n / 100) for n in range(10)]
    # Half of this arm's turns were cut; their last delta came early (0.1 s), which is exactly
    # what made them rank as the FASTEST turns before.
    turns += [turn(run, "cutter", f"i{n}", 0, last=1.0) for n in range(5)]
    turns += [
        turn(run, "cutter", f"i{n}", 0, outcome="cut", last=0.1, first=None) for n in range(5, 10)
    ]
    run_dir = write_run(tmp_path, run, ["steady", "cutter"], turns, [], deadline_ms=8000)
    report = report_json(run_dir, tmp_path / "out")
    cutter, steady = report["arms"]["cutter"], report["arms"]["steady"]
    assert cutter["last_token"]["cut"] == 5 and cutter["last_token"]["n"] == 10
    # The median turn is a cut one: at least the deadline, flagged, never 0.55 s.
    assert cutter["last_token"]["p50_censored"] and cutter["last_token"]["p50_s"] == 8.0
    assert cutter["last_token"]["p95_censored"] and cutter["last_token"]["p95_s"] == 8.0
    # A cut turn with no first token ranks above too.
    assert cutter["first_token"]["p95_censored"]
    # The arm that finished everything is slower per completed turn, but ranks as faster.
    assert steady["last_token"]["p50_s"] < cutter["last_token"]["p50_s"]
    assert not steady["last_token"]["p95_censored"]
    assert 2.0 < steady["last_token"]["p95_s"] < 2.1


def test_an_item_that_failed_for_infrastructure_on_one_arm_is_dropped_from_every_arm(
    tmp_path: Path,
) -> None:
    run = "r-infra"
    turns: list[TurnRecord] = []
    calls: list[CallRecord] = []
    for arm in ("a", "b"):
        for item in ("alpha", "beta", "gamma"):
            failed = arm == "a" and item == "beta"
            turns.append(
                turn(run, arm, item, 0, outcome="infra_failed" if failed else "done", last=1.0)
            )
            calls.append(call(run, len(calls) + 1, arm, item, 0, cost="0.25"))
    run_dir = write_run(tmp_path, run, ["a", "b"], turns, calls)
    report = report_json(run_dir, tmp_path / "out")
    assert report["dropped_items"] == ["beta"]
    for name in ("a", "b"):
        arm = report["arms"][name]
        # b ran beta fine, but comparing b on three items with a on two would not be fair.
        assert arm["outcomes"] == {"done": 2}, name
        assert arm["turns"] == 2 and arm["turns_dropped"] == 1
        # The money beta cost is still booked: dropped from the comparison, not from the bill.
        assert Decimal(arm["cost_usd"]) == Decimal("0.75")
        assert Decimal(arm["cost_usd_dropped"]) == Decimal("0.25")
        assert arm["cost_per_turn"]["mean"] == 0.25 and arm["cost_per_turn"]["n"] == 2
    assert Decimal(report["total_cost_usd"]) == Decimal("1.50")


def test_tokens_purposes_and_response_sizes_per_arm(tmp_path: Path) -> None:
    run = "r-tokens"
    turns = [turn(run, "a", "x", n) for n in range(2)]
    calls = [
        call(run, 1, "a", "x", 0, cost="0.01", chunks=[100, 50]),
        call(run, 2, "a", "x", 0, cost="0.02", purpose="utility", chunks=[30]),
        call(run, 3, "a", "x", 1, cost="0.04", chunks=[20]),
        call(run, 4, "a", "x", 1, cost="0.08", purpose="utility", chunks=[]),
    ]
    run_dir = write_run(tmp_path, run, ["a"], turns, calls)
    arm = report_json(run_dir, tmp_path / "out")["arms"]["a"]
    assert (arm["input_tokens"], arm["output_tokens"]) == (400, 80)
    assert (arm["cache_read_tokens"], arm["reasoning_tokens"]) == (120, 20)
    assert arm["purposes"]["utility"]["share"] == 0.5
    assert Decimal(arm["purposes"]["utility"]["cost_usd"]) == Decimal("0.10")
    assert arm["response_bytes"]["per_call_mean"] == 50.0  # (150 + 30 + 20 + 0) / 4
    assert arm["response_bytes"]["per_call_max"] == 150
    assert arm["response_bytes"]["per_turn_mean"] == 100.0  # (180 + 20) / 2
    interval = arm["cost_per_turn"]
    assert interval["mean"] == (0.03 + 0.12) / 2
    assert interval["low"] <= interval["mean"] <= interval["high"]


def test_a_call_outside_any_turn_is_billed_and_named(tmp_path: Path) -> None:
    run = "r-outside"
    calls = [call(run, 1, "a", "x", 0, cost="0.01"), call(run, 2, "a", None, None, cost="0.5")]
    run_dir = write_run(tmp_path, run, ["a"], [turn(run, "a", "x", 0)], calls)
    report = report_json(run_dir, tmp_path / "out")
    assert Decimal(report["arms"]["a"]["cost_usd"]) == Decimal("0.51")
    assert report["arms"]["a"]["cost_per_turn"]["mean"] == 0.01
    limitations = (tmp_path / "out" / "report.md").read_text().split("## 12 ")[1]
    assert "1 call(s) outside any turn ($0.5) are in their arm's total cost" in limitations
