"""`harness runs ROOT` (harness/report/runs_index.py): one line per run with its status and items
done of planned, the report's outcome when one was written, a running run's progress, and the
static index page linking each report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.report.runs_index import index_page, list_runs
from tests.helpers.report_runs import turn, write_run
from tests.helpers.studies import harness


def two_runs(root: Path) -> tuple[Path, Path]:
    done = [turn("r-1", arm, f"q{i}", 0) for arm in ("a", "b") for i in range(3)]
    first = write_run(root, "r-1", ["a", "b"], done, [])
    going = [turn("r-2", "a", "q0", 0), turn("r-2", "b", "q0", 0), turn("r-2", "a", "q1", 0)]
    second = write_run(root, "r-2", ["a", "b"], going, [], finished=False)
    header = json.loads((second / "run.json").read_text())
    header["study"]["items"] = 3
    header["started"] = "2026-12-02T00:00:00"
    (second / "run.json").write_text(json.dumps(header))
    return first, second


def test_each_run_has_its_status_and_items_done_of_planned(tmp_path: Path) -> None:
    two_runs(tmp_path / "runs")
    reports = tmp_path / "reports"
    (reports / "r-1").mkdir(parents=True)
    (reports / "r-1" / "report.json").write_text(json.dumps({"outcome": "GO"}))
    (reports / "r-1" / "report.html").write_text("<html></html>")
    lines = list_runs(tmp_path / "runs", reports)
    assert [(r.run_id, r.status, r.items_done, r.items_planned) for r in lines] == [
        ("r-1", "passed", 3, 3),
        ("r-2", "running", 1, 3),  # q0 done by both arms; q1 only by a
    ]
    assert lines[0].headline.startswith("outcome GO;") and lines[0].report is not None
    assert lines[1].headline == "a 2 turns, b 1 turns" and lines[1].report is None
    page = index_page(lines, tmp_path / "runs", reports / "index.html")
    assert 'href="r-1/report.html"' in page and page.count("<tr>") == 3


@pytest.mark.integration
def test_the_command_prints_a_line_per_run_and_refuses_a_missing_folder(tmp_path: Path) -> None:
    two_runs(tmp_path / "runs")
    done = harness("runs", str(tmp_path / "runs"), "--html", str(tmp_path / "index.html"))
    assert done.returncode == 0, done.stderr
    assert "r-1" in done.stdout and "running" in done.stdout
    assert (tmp_path / "index.html").is_file()
    missing = harness("runs", str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
    assert "not a folder" in missing.stderr
