"""records.jsonl: the raw rows behind every aggregate of report.json, enough to recompute them
without the run directory (here: with numpy and the rules the report states)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest

from rundir.calls.calllog import CallRecord
from rundir.turns.turns import TurnOutcome, TurnRecord
from tests.helpers.report_runs import call, turn, write_run
from tests.helpers.studies import harness, read_jsonl

pytestmark = pytest.mark.integration


def test_every_per_arm_aggregate_recomputes_from_the_records(tmp_path: Path) -> None:
    run = "r-records"
    turns: list[TurnRecord] = []
    calls: list[CallRecord] = []
    for arm in ("a", "b"):
        for n in range(20):
            outcome: TurnOutcome = "cut" if arm == "b" and n % 7 == 0 else "done"
            outcome = "infra_failed" if arm == "a" and n == 3 else outcome
            turns.append(turn(run, arm, f"it{n}", 0, outcome=outcome, last=0.5 + n / 10))
            calls.append(call(run, len(calls) + 1, arm, f"it{n}", 0, cost=f"0.0{n % 9}1",
                              chunks=[10 * n, 7]))  # fmt: skip
    run_dir = write_run(tmp_path, run, ["a", "b"], turns, calls, deadline_ms=3000)
    out = tmp_path / "out"
    done = harness(
        "report", str(run_dir), "--out", str(out), "--format", "md", "--resamples", "100"
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads((out / "report.json").read_text())
    rows = read_jsonl(out / "records.jsonl")
    dropped = sorted({r["item"] for r in rows if r["kind"] == "turn" and r["dropped"]})
    assert dropped == report["dropped_items"] == ["it3"]
    for arm, figures in report["arms"].items():
        mine = [r for r in rows if r["kind"] == "turn" and r["arm"] == arm and not r["dropped"]]
        billed = [r for r in rows if r["kind"] == "call" and r["arm"] == arm]
        assert figures["turns"] == len(mine)
        assert Decimal(figures["cost_usd"]) == sum(Decimal(r["cost_usd"]) for r in billed)
        assert figures["output_tokens"] == sum(r["tokens"]["output"] for r in billed)
        sizes = [r["response_bytes"] for r in billed]
        assert figures["response_bytes"]["per_call_mean"] == round(sum(sizes) / len(sizes), 1)
        # The stated rule: cut turns rank above every completed turn (as +inf), linear percentile.
        ranked = [r["last_token_s"] if r["outcome"] == "done" else np.inf for r in mine]
        p95 = float(np.percentile(ranked, 95)) if np.isfinite(ranked).all() else None
        if p95 is None:
            assert figures["last_token"]["p95_censored"]
            assert figures["last_token"]["p95_s"] == 3.0
        else:
            assert figures["last_token"]["p95_s"] == round(p95, 4)
        per_turn = [float(r["cost_usd"]) for r in mine]
        assert figures["cost_per_turn"]["mean"] == sum(per_turn) / len(per_turn)
    assert report["arms"]["b"]["last_token"]["p95_censored"]
    assert not report["arms"]["a"]["last_token"]["p95_censored"]
