"""harness.run.live.settle_open: a run a crashed proxy left open, settled at what its files prove,
never below what the ledger booked, and refused in one line when the log is damaged."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.run.live.settle_open import settle_left_open
from ledger.entries import CallSettlement
from ledger.ledger import Ledger


def _crashed(path: Path) -> Ledger:
    led = Ledger(path)
    led.open_stage("pilot", Decimal(10))
    led.reserve_run("crashed", Decimal(3), "pilot")
    led.settle_calls([CallSettlement(run_id="crashed", seq=1, cost_usd=Decimal("0.25"))])
    return led


def test_without_a_run_dir_the_whole_cap_is_charged(tmp_path: Path) -> None:
    led = _crashed(tmp_path / "ledger.jsonl")
    done = settle_left_open(led, "crashed", None)
    assert (done.basis, done.total_usd, done.booked_usd) == ("full_reservation", 3, Decimal("0.25"))
    assert led.state().runs["crashed"].settled
    with pytest.raises(HarnessError, match="already settled"):
        settle_left_open(led, "crashed", None)
    with pytest.raises(HarnessError, match="no run 'other'"):
        settle_left_open(led, "other", None)


def test_the_call_log_total_counts_but_never_below_the_booked_calls(tmp_path: Path) -> None:
    led = _crashed(tmp_path / "ledger.jsonl")
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    # One call at $0.10 logged, and a record the crash tore: less than the $0.25 already booked.
    lines = json.dumps({"run_id": "crashed", "seq": 1, "cost_usd": 0.1}) + '\n{"run_id": "cr'
    (run_dir / "calls.jsonl").write_text(lines)
    done = settle_left_open(led, "crashed", run_dir)
    assert done.basis == "call_log" and done.total_usd == Decimal("0.25")
    assert "1 calls logged $0.1" in done.note


def test_a_missing_or_damaged_call_log_is_refused_before_anything_is_booked(
    tmp_path: Path,
) -> None:
    led = _crashed(tmp_path / "ledger.jsonl")
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    with pytest.raises(HarnessError, match="no call log"):
        settle_left_open(led, "crashed", run_dir)
    (run_dir / "calls.jsonl").write_text("not json\n")
    with pytest.raises(HarnessError, match=r"calls\.jsonl:1: not JSON"):
        settle_left_open(led, "crashed", run_dir)
    assert not led.state().runs["crashed"].settled
