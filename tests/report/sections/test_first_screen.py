"""The report's first screen (harness/report/sections/first_screen.py): the outcome and each arm's
headline before section 1, a linked table of contents, report.json carrying what the report
states, and a run that has not finished refused unless --partial, then marked as such
(harness/report/reading/unfinished.py). The judged example's own first screen is held by
tests/report/test_judged_example.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from pypdf import PdfReader

from harness.errors import HarnessError
from harness.report.formats.chromium import run_chromium
from harness.report.generate import generate
from harness.report.reading.inputs import load_inputs
from tests.helpers.report_runs import turn, write_run
from tests.helpers.studies import harness
from tests.report.browser import chromium

__all__ = ["chromium"]  # a fixture

ARMS = ("bare", "memory")
ITEMS = [f"q{n:02d}" for n in range(8)]


def a_run(tmp_path: Path, finished: bool = True, items: list[str] = ITEMS) -> Path:
    turns = [turn("r-f", arm, item, n) for arm in ARMS for item in items for n in range(2)]
    return write_run(tmp_path, "r-f", list(ARMS), turns, [], finished=finished)


def judgments(path: Path, items: list[str] = ITEMS) -> Path:
    # memory right on 6 of 8 last turns, bare on 2 of 8.
    rows = [
        {"item": item, "arm": arm, "turn": 1, "metric": "recall",
         "correct": k < (6 if arm == "memory" else 2)}
        for arm in ARMS
        for k, item in enumerate(items)
    ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def make(tmp_path: Path, run_dir: Path, items: list[str] = ITEMS, **options: object) -> Path:
    inputs = load_inputs(judgments=judgments(tmp_path / "j.jsonl", items))
    out = tmp_path / "out"
    generate([run_dir], inputs, out=out, formats=("md", "html"), resamples=200, **options)  # type: ignore[arg-type]
    return out


def test_the_outcome_and_every_arms_headline_come_before_section_1(tmp_path: Path) -> None:
    out = make(tmp_path, a_run(tmp_path))
    md = (out / "report.md").read_text()
    first = md.splitlines()[:40]
    head = "\n".join(first)
    assert head.index("Outcome:") < head.index("## Contents") < md.index("## 1 Run identity")
    rows = {line.split("|")[1].strip(): line for line in first if line.startswith("| ")}
    # recall's mean per arm, with its interval, on the arm's headline row.
    assert "0.750 \\[" in rows["memory"] and "0.250 \\[" in rows["bare"]
    assert "0 of 16" in rows["memory"]  # failed turns of turns
    # The contents link every section to its anchor, in markdown and in HTML.
    for number in range(1, 14):
        assert f"](#s{number})" in md and f'<a id="s{number}"></a>' in md
    html = (out / "report.html").read_text()
    assert html.index('id="glance"') < html.index('id="s1"')
    assert '<meta name="viewport"' in html and 'href="#s13"' in html


def test_report_json_carries_results_progress_and_sections(tmp_path: Path) -> None:
    out = make(tmp_path, a_run(tmp_path))
    data = json.loads((out / "report.json").read_text())
    assert data["schema"] == 3
    assert data["outcome"] is None  # no analysis plan: no confirmatory outcome
    assert data["results"]["memory"]["recall (0/1)"]["mean"] == pytest.approx(0.75)
    assert data["results"]["bare"]["recall (0/1)"]["n"] == 8
    assert data["progress"]["finished"] is True and data["progress"]["turns_done"] == 32
    assert [s["number"] for s in data["sections"]] == list(range(1, 14))
    assert data["sections"][1]["not_run"]  # section 2 needs --header


def test_a_record_mode_outcome_says_it_is_of_stub_answers(tmp_path: Path) -> None:
    run_dir = a_run(tmp_path)
    header = json.loads((run_dir / "run.json").read_text())
    header["mode"] = "record"
    (run_dir / "run.json").write_text(json.dumps(header))
    md = (make(tmp_path, run_dir) / "report.md").read_text()
    assert "computed on stub answers" in md.split("## Contents")[0]


def test_an_unfinished_run_is_refused_unless_partial_then_marked(tmp_path: Path) -> None:
    run_dir = a_run(tmp_path, finished=False, items=ITEMS[:3])
    with pytest.raises(HarnessError) as refused:
        make(tmp_path, run_dir, ITEMS[:3])
    assert "not finished" in str(refused.value) and "--partial" in str(refused.value.hint)
    assert not (tmp_path / "out" / "report.md").exists()
    out = make(tmp_path, run_dir, ITEMS[:3], partial=True)
    md = (out / "report.md").read_text()
    assert "UNFINISHED" in md.split("## Contents")[0]
    limitations = md.split("\n## 12 ")[1].split("\n## ")[0]
    assert "UNFINISHED" in limitations and "12 turns done" in limitations
    assert json.loads((out / "report.json").read_text())["progress"]["finished"] is False


@pytest.mark.integration
@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("report",), "no run directory given"),
        (("report", "runs/x", "--resamples", "0"), "--resamples 0"),
    ],
)
def test_report_usage_mistakes_are_one_line(args: tuple[str, ...], words: str) -> None:
    done = harness(*args)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert words in done.stderr and "hint" in done.stderr


def page_width(html: Path, chromium_binary: str, width: int) -> int:
    """The page's laid-out width in a `width`-pixel window: a copy of the page with a script
    that writes it into the DOM (the report's own CSP runs none), dumped by headless Chromium."""
    page = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", html.read_text())
    probe = "document.body.setAttribute('data-w', document.documentElement.scrollWidth)"
    copy = html.with_name("width-probe.html")
    copy.write_text(page.replace("</body>", f"<script>{probe}</script></body>"))
    done = run_chromium(copy, f"--window-size={width},1000", "--dump-dom")
    found = re.search(r'data-w="(\d+)"', done.stdout)
    assert found, done.stderr[-2000:]
    return int(found.group(1))


def test_at_800_pixels_no_column_leaves_the_page(tmp_path: Path, chromium: str) -> None:
    # A verdict-sized table at 800 px: every wide table scrolls in its own box instead.
    out = make(tmp_path, a_run(tmp_path))
    assert page_width(out / "report.html", chromium, 800) <= 800


def test_the_pdf_is_a4_with_page_numbers_unless_letter_is_asked(
    tmp_path: Path, chromium: str
) -> None:
    run_dir = a_run(tmp_path)
    inputs = load_inputs(judgments=judgments(tmp_path / "j.jsonl"))
    for paper, size in (("a4", (595, 842)), ("letter", (612, 792))):
        out = tmp_path / paper
        generate([run_dir], inputs, out=out, formats=("pdf",), resamples=200, paper=paper)
        pages = PdfReader(out / "report.pdf").pages
        assert (
            round(float(pages[0].mediabox.width)),
            round(float(pages[0].mediabox.height)),
        ) == size
        last = len(pages)
        assert f"page {last} of {last}" in pages[-1].extract_text()
