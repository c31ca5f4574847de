"""Judgments keyed by (run, arm, item, turn, metric), each metric on its declared scale: the issue's
96-line case as a new user would try it (a 0/1 `recall` on last turns, a 1-5 `in_character` on
every turn), reversed line order changing nothing, and a second judgment for a key, a mixed scale
or a value off its scale refused; the latency table's p99 and maximum; section 10's "not run"."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.report.formats.drilldown import script_hash
from harness.report.generate import generate
from harness.report.reading.inputs import load_inputs
from tests.helpers.report_runs import turn, write_run
from tests.report.browser import Hits, chromium, hits, open_page

__all__ = ["chromium", "hits"]  # fixtures

ARMS = ("bare", "memory")
ITEMS = [f"q{n:02d}" for n in range(12)]


def judged_run(tmp_path: Path) -> Path:
    turns = [turn("r-j", arm, item, n) for arm in ARMS for item in ITEMS for n in range(3)]
    return write_run(tmp_path, "r-j", list(ARMS), turns, [])


def lines() -> list[dict[str, object]]:
    """24 recall judgments (last turns) and 72 in_character scores (every turn): 96 lines."""
    rows: list[dict[str, object]] = []
    for arm in ARMS:
        for k, item in enumerate(ITEMS):
            right = k < (9 if arm == "memory" else 3)
            rows.append({"item": item, "arm": arm, "turn": 2, "metric": "recall", "correct": right})
            for n in range(3):
                score = 5 if arm == "memory" else 1 + (k + n) % 5
                rows.append(
                    {"item": item, "arm": arm, "turn": n, "metric": "in_character",
                     "score": score, "scale": "1-5"}
                )  # fmt: skip
    return rows


def write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def report(tmp_path: Path, run_dirs: list[Path], name: str, **given: Path) -> str:
    inputs = load_inputs(**given)
    out = tmp_path / name
    generate(run_dirs, inputs, out=out, formats=("md",), resamples=400, seed=1)
    return (out / "report.md").read_text()


def section(markdown: str, number: int) -> str:
    body = markdown.split(f"\n## {number} ")[1].split("\n## ")[0]
    return "\n".join(line for line in body.splitlines() if not line.startswith("- "))  # no hashes


def test_each_metric_keeps_its_own_scale_and_every_judgment(tmp_path: Path) -> None:
    run_dir = judged_run(tmp_path)
    rows = lines()
    assert len(rows) == 96
    md = report(tmp_path, [run_dir], "a", judgments=write(tmp_path / "j.jsonl", rows))
    results = section(md, 6)
    # recall: 9 and 3 of 12 right; in_character: memory always 5, bare (k + n) % 5 + 1 over 36.
    bare_mean = sum(1 + (k + n) % 5 for k in range(12) for n in range(3)) / 36
    assert "| all | recall | 0/1 | memory | 12 | 0.7500 |" in results
    assert "| all | recall | 0/1 | bare | 12 | 0.2500 |" in results
    assert "| all | in_character | 1-5 | memory | 36 | 5.0000 |" in results
    assert f"| all | in_character | 1-5 | bare | 36 | {bare_mean:.4f} |" in results
    assert "| judge-free | recall | 0/1 | 24 |" in section(md, 5)
    verdicts = section(md, 7)
    assert re.search(
        r"\| all \| recall \| bare - memory \| 12 \| -0\.5000 \|.*\| memory better \|", verdicts
    )

    reversed_md = report(
        tmp_path, [run_dir], "b", judgments=write(tmp_path / "r.jsonl", rows[::-1])
    )
    for number in (5, 6, 7):
        assert section(reversed_md, number) == section(md, number)


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"item": "q00", "arm": "bare", "turn": 2, "metric": "recall", "correct": False},
         "a second judgment of 'recall' for arm 'bare', item 'q00', turn 2 (first on line 1)"),
        ({"item": "q00", "arm": "bare", "turn": 1, "metric": "recall", "score": 3, "scale": "1-5"},
         "metric 'recall' is on scale 1-5 here but 0/1 on line 1"),
        ({"item": "q00", "arm": "bare", "turn": 0, "metric": "in_character", "score": 7,
          "scale": "1-5"}, "in_character = 7 is outside its scale 1-5"),
    ],
)  # fmt: skip
def test_a_judgment_that_would_overwrite_or_mix_is_refused(
    tmp_path: Path, bad: dict[str, object], message: str
) -> None:
    rows = lines()
    path = write(tmp_path / "j.jsonl", [rows[0], *rows[1:], bad])
    with pytest.raises(HarnessError) as refused:
        load_inputs(judgments=path)
    assert message in refused.value.message and "\n" not in refused.value.message


def test_latency_has_p99_and_maximum(tmp_path: Path) -> None:
    turns = [turn("r-l", "a", f"i{n}", 0, last=0.2 + n / 1000) for n in range(99)]
    turns.append(turn("r-l", "a", "slow", 0, last=1.97))
    run_dir = write_run(tmp_path, "r-l", ["a"], turns, [])
    latency = section(report(tmp_path, [run_dir], "l"), 9)
    assert "last token p99" in latency and "last token max" in latency
    row = next(line for line in latency.splitlines() if line.startswith("| a |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[10] == "1.97 s"  # the slowest turn, which no percentile column shows
    # numpy's linear p99 of 100 values: position 98.01, between 0.298 and 1.97.
    assert cells[9] == f"{0.298 + 0.01 * (1.97 - 0.298):.2f} s" == "0.31 s"
    gate = section(report(tmp_path, [run_dir], "m"), 10)
    assert "**not run**: no --gate was given; the stability check: not run" in gate


def test_the_drill_down_shows_each_items_answers_votes_and_outcome_as_text(
    tmp_path: Path, chromium: str, hits: Hits
) -> None:
    lure = f'<img src="{hits.url}/answer.png"><script>document.title="pwned"</script>'
    turns = [
        turn("r-d", arm, item, 0, text=lure if arm == "memory" else f"plain {item}")
        for arm in ARMS
        for item in ITEMS
    ]
    run_dir = write_run(tmp_path, "r-d", list(ARMS), turns, [])
    rows: list[dict[str, object]] = [
        {"item": item, "arm": arm, "turn": 0, "metric": "recall", "correct": arm == "memory",
         "family": "recall" if k % 2 else "persona", "judge": "exact"}
        for arm in ARMS
        for k, item in enumerate(ITEMS)
    ]  # fmt: skip
    report(tmp_path, [run_dir], "d", judgments=write(tmp_path / "j.jsonl", rows))
    page = tmp_path / "d" / "drilldown.html"
    html = page.read_text()
    # The page's one script is its own sort and filter, allowed by its hash; the answer's stays
    # text.
    assert html.count("<script") == 1 and "&lt;script&gt;" in html and "&lt;img src=" in html
    assert f"script-src '{script_hash()}'" in html
    assert re.findall(r"<h2>Family (\w+) \((\d+) judgments\)</h2>", html) == [
        ("persona", "12"),
        ("recall", "12"),
    ]
    row = re.search(r'<tr id="q01/0"><td>q01</td><td>0</td><td>recall</td>.*?</tr>', html)
    assert row is not None and "plain q01" in row.group(0) and "bare: 0" in row.group(0)
    assert "j.jsonl line" in row.group(0)
    assert open_page(page, tmp_path, "drilldown") == [] and hits.paths == []
    assert (tmp_path / "drilldown.png").stat().st_size > 20_000


def test_the_t1_pack_gives_clusters_and_families(tmp_path: Path) -> None:
    run_dir = judged_run(tmp_path)
    rows = [r for r in lines() if r["metric"] == "recall"]
    pack = tmp_path / "pack.jsonl"
    pack.write_text(
        "".join(
            json.dumps(
                {"id": item, "memory": {"history": {"id": f"conv-{k // 4}"},
                                        "question": {"category": 1 + k % 2}}}
            ) + "\n"
            for k, item in enumerate(ITEMS)
        )
    )  # fmt: skip
    judgments = write(tmp_path / "j.jsonl", rows)
    plain = section(report(tmp_path, [run_dir], "p", judgments=judgments), 6)
    packed = section(report(tmp_path, [run_dir], "q", judgments=judgments, pack=pack), 6)
    assert "items as clusters" in plain
    assert "the T1 pack's histories as clusters (3)" in packed
    # Families by category (odd k: category 2); memory is right on k < 9: 4 of the 6 odd ones.
    memory_odd = sum(1 for k in range(12) if k % 2 == 1 and k < 9) / 6
    assert f"| category 2 | recall | 0/1 | memory | 6 | {memory_odd:.4f} |" in packed
    assert "| all | recall |" in plain and "| all | recall |" not in packed
    families = section(report(tmp_path, [run_dir], "s", judgments=judgments, pack=pack), 4)
    assert "| category 1 | 6 | 0 | 36 |" in families and "| category 2 | 6 | 0 | 36 |" in families
