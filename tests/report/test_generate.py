"""`harness report RUN_DIR`: the thirteen sections from a live run's own files and the optional
inputs, written outside the run (so `harness audit` still passes), exact costs."""

from __future__ import annotations

import hashlib
import json
import re
from decimal import Decimal
from pathlib import Path

import pytest
from pypdf import PdfReader

from harness.report.model import TITLES
from tests.fakevendor.server import FakeVendor
from tests.helpers.gate_studies import ITEMS, gate_study
from tests.helpers.studies import gate_then_live, harness, only_run, read_jsonl
from tests.proxy.live_helpers import STUDY_KEYS
from tests.report.browser import chromium

pytestmark = pytest.mark.integration

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart" / "study.toml"


__all__ = ["chromium"]  # a fixture


def pdf_text(path: Path) -> str:
    return " ".join(" ".join(p.extract_text() for p in PdfReader(path).pages).split())


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_live_runs_report_has_its_sections_and_leaves_the_run_auditable(
    tmp_path: Path, chromium: str
) -> None:
    with FakeVendor() as vendor:
        study = gate_study(tmp_path / "study", vendors={"openai": vendor.url})
        run_dir = gate_then_live(study, tmp_path / "runs", STUDY_KEYS)
    (gate,) = (tmp_path / "runs").glob("*/gate.json")
    ledger = tmp_path / "study" / "ledger.jsonl"
    out = tmp_path / "report"
    done = harness(
        "report", str(run_dir), "--json", "--out", str(out), "--format", "md,html,pdf",
        "--gate", str(gate), "--ledger", str(ledger), "--resamples", "500",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report == json.loads((out / "report.json").read_text())
    assert not (run_dir / "report.json").exists()
    audit = harness("audit", str(run_dir), "--ledger", str(ledger))
    assert audit.returncode == 0, audit.stdout + audit.stderr[-2000:]

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
    assert latencies[0] <= toy["last_token"]["p95_s"] <= latencies[-1]

    assert pdf_text(out / "report.pdf").count("not run") >= 3
    markdown = (out / "report.md").read_text()
    headings = re.findall(r"^## (\d+) (.+)$", markdown, flags=re.M)
    assert headings == [(str(n), title) for n, title in enumerate(TITLES, 1)]
    html = (out / "report.html").read_text()
    found = re.findall(r"<h2>(\d+) ([^<]+)</h2>", html)
    assert [title for _, title in found] == list(TITLES)
    section = dict(zip(TITLES, re.split(r"^## \d+ .+$", markdown, flags=re.M)[1:], strict=True))
    # Inputs not given read "not run"; the gate and the ledger were given and are shown.
    assert "**not run**" in section["The question"]
    assert "**not run**" in section["Results per family"]
    assert "**not run**" in section["Pairwise verdicts"]
    assert "The gate PASSED" in section["The determinism gate and the stability check"]
    assert "not run" not in section["The spend ledger"]
    assert "counts against the cap" in section["The spend ledger"]
    # Every file named in the report is named with its SHA-256 as it is on disk now.
    for path in (run_dir / "calls.jsonl", run_dir / "turns.jsonl", gate, ledger):
        assert f"{path} (SHA-256 {sha256(path)}" in section[TITLES[-1]], path
    assert (
        f"{run_dir / 'calls.jsonl'} (SHA-256 {sha256(run_dir / 'calls.jsonl')}"
        in (section["Cost per arm, tokens, cached tokens and the counterfactual"])
    )
    # records.jsonl recomputes the cost exactly.
    rows = read_jsonl(out / "records.jsonl")
    assert sum(Decimal(r["cost_usd"]) for r in rows if r["kind"] == "call") == exact
    table = harness("report", str(run_dir), "--out", str(tmp_path / "again"))
    assert table.returncode == 0 and f"total cost USD {exact}" in table.stdout


def test_the_quickstarts_report_in_every_format_leaves_it_auditable(
    tmp_path: Path, chromium: str
) -> None:
    runs = tmp_path / "runs"
    done = harness("record", str(QUICKSTART), "--run-dir", str(runs), "--isolation", "local")
    assert done.returncode == 0, done.stderr[-3000:]
    run_dir = only_run(runs)
    out = tmp_path / "report"
    done = harness("report", str(run_dir), "--out", str(out), "--format", "md,html,pdf")
    assert done.returncode == 0, done.stderr[-3000:]
    assert sorted(p.name for p in out.iterdir()) == [
        "records.jsonl", "report.html", "report.json", "report.md", "report.pdf",
    ]  # fmt: skip
    text = pdf_text(out / "report.pdf")
    positions = [text.find(f"{n} {title}") for n, title in enumerate(TITLES, 1)]
    assert -1 not in positions and positions == sorted(positions)
    assert f"{run_dir / 'turns.jsonl'}"[:40] in text  # paths are named (wrapped in the PDF)
    audit = harness("audit", str(run_dir))
    assert audit.returncode == 0, audit.stdout + audit.stderr[-2000:]


def test_a_report_is_never_written_into_a_run(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "run.json").write_text('{"run_id": "r", "mode": "record"}')
    done = harness("report", str(run_dir), "--out", str(run_dir / "report"))
    assert done.returncode == 2
    assert "inside the run directory" in done.stderr and "Traceback" not in done.stderr
    assert not (run_dir / "report").exists()


def test_a_directory_that_is_not_a_run_is_named(tmp_path: Path) -> None:
    done = harness("report", str(tmp_path / "nothing"), "--out", str(tmp_path / "out"))
    assert done.returncode != 0
    assert "is not a run directory" in done.stderr and "Traceback" not in done.stderr
