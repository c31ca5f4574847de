"""Section 9's latency minus the round trip: an arm that calls the vendor three times in a row
pays three round trips, and they come off its turn latency (harness/stats/latency.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rundir.calls.calllog import CallRecord, Timing
from rundir.turns.turns import TurnRecord
from tests.helpers.report_runs import call, turn, write_run
from tests.helpers.studies import harness

pytestmark = pytest.mark.integration


def test_each_arm_latency_minus_its_round_trips(tmp_path: Path) -> None:
    run = "r-net"
    turns: list[TurnRecord] = []
    calls: list[CallRecord] = []
    for n in range(4):
        item = f"i{n}"
        turns.append(turn(run, "near", item, 0, last=0.5))
        turns.append(turn(run, "chatty", item, 0, last=0.65))
        at = 100.0 * n
        near = Timing(start=at, first_byte=at + 0.05, end=at + 0.3)
        calls.append(call(run, len(calls) + 1, "near", item, 0, timing=near))
        for k in range(3):  # in sequence: none overlaps the next
            start = at + 10 + k
            chatty = Timing(start=start, first_byte=start + 0.08, end=start + 0.2)
            calls.append(call(run, len(calls) + 1, "chatty", item, 0, timing=chatty))
    run_dir = write_run(tmp_path, run, ["near", "chatty"], turns, calls)
    out = tmp_path / "out"
    done = harness(
        "report", str(run_dir), "--out", str(out), "--format", "md", "--resamples", "100"
    )
    assert done.returncode == 0, done.stderr[-3000:]
    latency = (out / "report.md").read_text().split("## 9 ")[1].split("## 10 ")[0]
    # The route's floor is the fastest first byte the run saw (50 ms), flagged as such.
    assert "openai.chat 50.0 ms (run_minimum, 16 calls)" in latency
    assert "| near | 0.45 s | 0.45 s |" in latency  # 0.5 - one round trip
    assert "| chatty | 0.50 s | 0.50 s |" in latency  # 0.65 - three
