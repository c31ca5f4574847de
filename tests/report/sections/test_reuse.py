"""The report's cost section counts reuse hits and the dollars saved
(harness/report/sections/reuse.py)."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.report_runs import call, turn, write_run
from tests.helpers.studies import harness


def test_the_cost_section_counts_hits_and_dollars_saved(tmp_path: Path) -> None:
    run = "r-reuse"
    turns = [turn(run, arm, "i1", 1) for arm in ("C0", "C1")]
    calls = [
        call(run, 1, "C0", "i1", 1, cost="0.25"),
        call(run, 2, "C1", "i1", 1, cost="0").model_copy(update={"reuse_of": 1}),
        call(run, 3, "C0", "i1", 1, cost="0.5"),
        call(run, 4, "C1", "i1", 1, cost="0.125"),
    ]
    run_dir = write_run(tmp_path, run, ["C0", "C1"], turns, calls)
    assert '"reuse_of":1' in (run_dir / "calls.jsonl").read_text()
    out = tmp_path / "report"
    done = harness("report", str(run_dir), "--out", str(out))
    assert done.returncode == 0, done.stderr[-2000:]
    section8 = (out / "report.md").read_text().split("## 8", 1)[1].split("## 9", 1)[0]
    assert "Reuse hits: 1 follower main call(s)" in section8
    assert "C1 from C0 1" in section8 and "saved $0.25" in section8
