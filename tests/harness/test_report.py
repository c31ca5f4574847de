"""`harness report RUN_DIR`: per-arm figures computed from the run's own files, exact costs."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

from tests.fakevendor.server import FakeVendor
from tests.harness.checks import ITEMS, gate_study
from tests.harness.studies import gate_then_live, harness, read_jsonl
from tests.proxy.live_helpers import STUDY_KEYS


def test_a_live_runs_report_matches_its_turns_and_call_log(tmp_path: Path) -> None:
    with FakeVendor() as vendor:
        study = gate_study(tmp_path / "study", vendors={"openai": vendor.url})
        run_dir = gate_then_live(study, tmp_path / "runs", STUDY_KEYS)
    done = harness("report", str(run_dir), "--json")
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report == json.loads((run_dir / "report.json").read_text())
    calls = read_jsonl(run_dir / "calls.jsonl")
    turns = read_jsonl(run_dir / "turns.jsonl")
    (toy,) = report["arms"].values()
    assert toy["turns"] == len(turns) == sum(len(item["turns"]) for item in ITEMS)
    assert toy["outcomes"] == {"done": len(turns)}
    assert toy["calls"] == len(calls) > 0
    exact = sum(Decimal(c["cost_usd"]) for c in calls)
    assert Decimal(toy["cost_usd"]) == Decimal(report["total_cost_usd"]) == exact > 0
    assert toy["output_tokens"] == sum(c["tokens"]["output"] for c in calls)
    latencies = sorted(t["last_token_s"] for t in turns)
    assert toy["last_token"]["n"] == len(turns)
    assert latencies[0] <= toy["last_token"]["p50_s"] <= latencies[-1]
    table = harness("report", str(run_dir))
    assert table.returncode == 0 and f"total cost USD {exact}" in table.stdout


def test_a_directory_that_is_not_a_run_is_named(tmp_path: Path) -> None:
    done = harness("report", str(tmp_path))
    assert done.returncode != 0
    assert "is not a run directory" in done.stderr and "Traceback" not in done.stderr
