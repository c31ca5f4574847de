"""examples/judged end to end as its README says, through the report: two record runs, `harness
judge` with two stub judges and the A/A control, then `harness report --judgments SET --analysis
examples/judged/analysis.toml`: the judged sections and the verdicts filled and traced to files;
a set of another run, a seal not the set's and a changed reply refused in one line."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from tests.helpers.studies import harness
from tests.report.browser import chromium, open_page

pytestmark = pytest.mark.integration

__all__ = ["chromium"]  # a fixture

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "judged"


def section(markdown: str, number: int) -> str:
    return markdown.split(f"\n## {number} ")[1].split("\n## ")[0]


def test_the_judged_example_reports_its_verdicts(tmp_path: Path, chromium: str) -> None:
    folder = tmp_path / "judged"
    shutil.copytree(EXAMPLE, folder)
    study = folder / "study.toml"
    study.write_text(study.read_text().replace('"../../ledger.jsonl"', '"ledger.jsonl"'))
    runs = tmp_path / "runs"
    for _ in range(2):
        done = harness("record", str(study), "--run-dir", str(runs), "--isolation", "local")
        assert done.returncode == 0, done.stderr[-2000:]
    first, second = sorted(runs.iterdir())
    judged = tmp_path / "set"
    done = harness(
        "judge", str(first), "--aa-run", str(second), "--aa-arm", "bare",
        "--rubrics", str(folder / "rubrics"), "--judges", str(folder / "judges.toml"),
        "--out", str(judged), "--seed", "1", "--controls-per-kind", "4",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]

    analysis = folder / "analysis.toml"
    out = tmp_path / "report"
    done = harness(
        "report", str(first), "--judgments", str(judged), "--analysis", str(analysis),
        "--out", str(out), "--format", "md,html", "--resamples", "1000",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    md = (out / "report.md").read_text()
    # The first screen: the outcome and each arm's headline within the first 40 lines, before
    # section 1, and report.json says the same outcome (issue 38).
    screen = md.splitlines()[:40]
    # A record run's cost ceiling is not read ($0 against $0 says nothing), so PORT, which
    # needs it held, cannot fire on stub answers: the outcome is the plan's last rule.
    assert any(line.startswith("Outcome: NOT SHOWN (") for line in screen), screen
    assert any(line.startswith("| bare | 0.000 ") for line in screen), screen
    assert any(line.startswith("| retrieval | 0.000 ") for line in screen), screen
    assert md.index("Outcome: NOT SHOWN") < md.index("\n## 1 Run identity")
    report_json = json.loads((out / "report.json").read_text())
    assert report_json["outcome"] == "NOT SHOWN" and report_json["verdicts"]
    assert report_json["ceilings"] == {"cost": "not read"}
    manifest_sha = hashlib.sha256((judged / "judgments.json").read_bytes()).hexdigest()
    for number in (5, 6, 7, 10, 14):
        assert "**not run**" not in section(md, number)
        assert f"judgments.json (SHA-256 {manifest_sha}" in section(md, number)
    metrics = section(md, 5)
    assert "| alpha | stub | rules-a | low | command |" in metrics
    assert "| better_reply | passed | - |" in metrics and "| grounded | passed | - |" in metrics
    results = section(md, 6)
    assert "| all | grounded | flag_share | bare | 30 |" in results
    assert "| all | better_reply | bare vs retrieval | 30 |" in results
    assert 'Confirmatory verdicts: the section "Verdicts" after section 11' in section(md, 7)
    # The confirmatory analysis's own section, after the spend ledger (design, Appendix A).
    assert md.index("\n## 11 ") < md.index("\n## 14 Verdicts") < md.index("\n## 12 ")
    verdicts = section(md, 14)
    plan_sha = hashlib.sha256(analysis.read_bytes()).hexdigest()
    assert f"analysis.toml (SHA-256 {plan_sha}" in verdicts
    assert f"analysis plan SHA-256 {plan_sha}" in verdicts
    assert "OUTCOME: NOT SHOWN (final look at n 10; rule NOT SHOWN" in verdicts
    assert "| cost | not read | record mode: stubs cost nothing |" in verdicts
    assert "| C1 - B | preference | better_reply | yes | 10 / 10 |" in verdicts
    for gate in ("judges", "stability", "aa", "n"):
        assert f"| {gate} | passed |" in verdicts
    stability = section(md, 10)
    assert "The determinism gate: not run" in stability and "| better_reply | 30 | 30 |" in (
        stability
    )
    drill = out / "drilldown.html"
    assert drill.read_text().count("<tr id=") == 90  # 30 pairs, 60 flagged replies
    assert open_page(drill, tmp_path, "drill") == []
    assert open_page(out / "report.html", tmp_path, "report") == []

    # A public copy of the judged report: written (its scan found no item, run or path), and
    # without the drill-down, which names items and quotes answers.
    public = tmp_path / "public"
    done = harness(
        "report", str(first), "--judgments", str(judged), "--analysis", str(analysis),
        "--out", str(public), "--format", "md", "--public", "--resamples", "200",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "OUTCOME: NOT SHOWN" in (public / "report.md").read_text()
    assert not (public / "drilldown.html").exists()

    # The same set given with the second run: it judged the first.
    done = harness("report", str(second), "--judgments", str(judged), "--out", str(tmp_path / "x"))
    assert done.returncode == 2 and f"--judgments judged run {first.name}, not one of" in (
        done.stderr
    )
    # A seal that is not the set's.
    seal = tmp_path / "other.seal.json"
    seal.write_text((tmp_path / "set.seal.json").read_text().replace('"seed": 1', '"seed": 2'))
    done = harness(
        "report", str(first), "--judgments", str(judged), "--seal", str(seal),
        "--out", str(tmp_path / "y"),
    )  # fmt: skip
    assert done.returncode == 2 and "is not the seal of" in done.stderr
    # A reply changed after it was judged.
    copied = tmp_path / "copied"
    shutil.copytree(judged, copied)
    shutil.copy(tmp_path / "set.seal.json", tmp_path / "copied.seal.json")
    reply = sorted((copied / "replies").iterdir())[0]
    reply.write_text(reply.read_text() + " ")
    done = harness("report", str(first), "--judgments", str(copied), "--out", str(tmp_path / "z"))
    assert done.returncode == 2
    assert "not every vote traces to its prompt and reply" in done.stderr
