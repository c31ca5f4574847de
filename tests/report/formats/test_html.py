"""The HTML report is one self-contained page that loads nothing (opened in headless Chromium,
its net log read), with inline SVG charts; the PDF printed from it reads back with every section."""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path

import pytest
from pypdf import PdfReader

from harness.report.model import TITLES
from ledger.ledger import Ledger
from rundir.calls.calllog import CallRecord
from rundir.turns.turns import TurnRecord
from tests.helpers.report_runs import call, turn, write_run
from tests.helpers.studies import harness
from tests.report.browser import Hits, chromium, hits, open_page

pytestmark = pytest.mark.integration

__all__ = ["chromium", "hits"]  # fixtures


def a_report(tmp_path: Path, lure: str) -> Path:
    run = "r-html"
    turns: list[TurnRecord] = []
    calls: list[CallRecord] = []
    for arm in ("bare", "retrieval"):
        for n in range(12):
            last = 0.4 + n / 10 if arm == "bare" else 0.9 + n / 20
            turns.append(turn(run, arm, f"item-{n}", 0, last=last, text=lure))
            calls.append(call(run, len(calls) + 1, arm, f"item-{n}", 0, cost=f"0.00{n + 1}"))
    turns.append(turn(run, "retrieval", "item-12", 0, outcome="cut", last=0.2))
    turns.append(turn(run, "bare", "item-12", 0))
    run_dir = write_run(tmp_path, run, ["bare", "retrieval"], turns, calls, deadline_ms=5000)
    ledger = tmp_path / "ledger.jsonl"
    led = Ledger(ledger)
    led.open_stage("pilot", Decimal(5))
    led.reserve_run(run, Decimal(2), stage="pilot")
    led.close()
    header = tmp_path / "header.toml"
    # Study text is data: markup in it must reach the page as text, never as an element.
    header.write_text(f"question = {lure!r}\n")
    out = tmp_path / "report"
    done = harness(
        "report", str(run_dir), "--out", str(out), "--format", "md,html,pdf",
        "--ledger", str(ledger), "--header", str(header), "--resamples", "200",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def test_the_html_page_makes_no_request_and_the_pdf_reads_back(
    tmp_path: Path, chromium: str, hits: Hits
) -> None:
    lure = f'<img src="{hits.url}/question.png"> Does memory help?'
    out = a_report(tmp_path, lure)
    html = (out / "report.html").read_text()
    assert (
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; img-src data:\">" in html
    )
    assert "<script" not in html and "&lt;img src=" in html
    assert len(re.findall(r"<svg", html)) == 3  # latency, cost per turn, ledger stage vs cap
    assert not re.search(r"(src|href)=\"https?:", html)
    assert open_page(out / "report.html", tmp_path, "report") == []
    assert hits.paths == []
    screenshot = tmp_path / "report.png"
    # A blank page's screenshot is about 5 KB; one with the tables and charts is far bigger.
    assert screenshot.stat().st_size > 40_000

    text = "\n".join(page.extract_text() for page in PdfReader(out / "report.pdf").pages)
    flat = " ".join(text.split())
    positions = [flat.find(f"{n} {title}") for n, title in enumerate(TITLES, 1)]
    assert -1 not in positions, [t for t, p in zip(TITLES, positions, strict=True) if p < 0]
    assert positions == sorted(positions)
    assert "not run: no --gate was given" in flat
    assert "Does memory help?" in flat


def test_the_pages_policy_blocks_what_a_template_bug_would_load(
    tmp_path: Path, chromium: str, hits: Hits
) -> None:
    out = a_report(tmp_path, "plain")
    html = (out / "report.html").read_text()
    planted = (
        f'<img src="{hits.url}/img.png"><link rel="stylesheet" href="{hits.url}/style.css">'
        f'<iframe src="{hits.url}/frame"></iframe><script src="{hits.url}/app.js"></script>'
    )
    bugged = tmp_path / "bugged.html"
    bugged.write_text(html.replace("<body>", "<body>" + planted, 1))
    assert open_page(bugged, tmp_path, "bugged") == []
    assert hits.paths == []
    # The same page without its policy does ask for them, and the net log shows it: the empty
    # lists above are the policy's doing, not a blind detector. (Nothing reaches the server even
    # then: the harness's Chromium resolves no host, IP literals included.)
    policy = re.search(r"<meta http-equiv=\"Content-Security-Policy\"[^>]*>", html)
    assert policy is not None
    unguarded = tmp_path / "unguarded.html"
    unguarded.write_text(bugged.read_text().replace(policy.group(0), ""))
    requested = open_page(unguarded, tmp_path, "unguarded")
    assert f"{hits.url}/img.png" in requested
    assert hits.paths == []
