"""Every report of the quickstart names its subject model in sections 1 and 3, and section 1 lists
the vendors and models the call log shows were called, with counts, without `--prices`
(harness/report/sections/paper_trail.py)."""

from __future__ import annotations

import tomllib
from collections import Counter
from pathlib import Path

import pytest

from tests.helpers.studies import REPO, harness, only_run, read_jsonl

pytestmark = pytest.mark.integration

QUICKSTART = REPO / "examples" / "quickstart" / "study.toml"


def test_the_quickstart_report_names_the_subject_and_the_models_called(tmp_path: Path) -> None:
    subject = tomllib.loads(QUICKSTART.read_text())["subject"]
    runs = tmp_path / "runs"
    done = harness("record", str(QUICKSTART), "--run-dir", str(runs), "--isolation", "local",
                   "--limit", "1")  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    run_dir = only_run(runs)
    out = tmp_path / "report"
    report = harness("report", str(run_dir), "--out", str(out), "--format", "md")
    assert report.returncode == 0, report.stderr
    text = (out / "report.md").read_text()
    one = text.split("## 1 ")[1].split("## 2 ")[0]
    three = text.split("## 3 ")[1].split("## 4 ")[0]
    for section in (one, three):
        assert f"Subject model: `{subject}`" in section
    calls = read_jsonl(run_dir / "calls.jsonl")
    counted = Counter(
        (c["vendor"], c["model_served"] or c["model_requested"], c["arm"]) for c in calls
    )
    per_model: Counter[tuple[str, str]] = Counter()
    for (vendor, model, _), n in counted.items():
        per_model[(vendor, model)] += n
    assert len(per_model) >= 2  # the chat model and the embedding model
    for (vendor, model), n in per_model.items():
        arms = ", ".join(sorted({a for v, m, a in counted if (v, m) == (vendor, model)}))
        assert f"| {vendor} | {model} | {n} | {arms} |" in one
    assert "not run (no --prices)" in text  # the list above needed no price table


def test_a_study_without_a_subject_says_so(tmp_path: Path) -> None:
    folder = tmp_path / "qs"
    folder.mkdir()
    for name in ("items.jsonl", "stubs.toml"):
        (folder / name).write_bytes((QUICKSTART.parent / name).read_bytes())
    text = QUICKSTART.read_text().replace('subject = "openai/gpt-4.1-mini"\n', "")
    text = text.replace('ledger = "../../ledger.jsonl"', 'ledger = "ledger.jsonl"')
    assert "subject" not in tomllib.loads(text)
    (folder / "study.toml").write_text(text)
    runs = tmp_path / "runs"
    done = harness("record", str(folder / "study.toml"), "--run-dir", str(runs),
                   "--isolation", "local", "--limit", "1", "--arm", "bare")  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    out = tmp_path / "report"
    assert (
        harness("report", str(only_run(runs)), "--out", str(out), "--format", "md").returncode == 0
    )
    one = (out / "report.md").read_text().split("## 1 ")[1].split("## 2 ")[0]
    assert "Subject model: not declared" in one
    assert "| openai | gpt-4.1-mini |" in one
