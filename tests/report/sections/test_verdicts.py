"""Sections 6 and 7 from a judgments file: per-family means with intervals, pairwise verdicts
(paired bootstrap, McNemar, Holm), and the study's controls flagged when they misbehave."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.helpers.report_runs import turn, write_run
from tests.helpers.studies import harness

pytestmark = pytest.mark.integration

ITEMS = [f"q{n:02d}" for n in range(30)]
# How many of the 30 items each arm answered right: `strong` clearly beats `weak`; `strong-again`
# is the same arm run twice (A/A) yet differs wildly; `scrambled` must fail but keeps up.
RIGHT = {"strong": 27, "weak": 10, "strong-again": 5, "scrambled": 27}


def judged(tmp_path: Path) -> tuple[Path, Path, Path]:
    run = "r-judged"
    turns = [turn(run, arm, item, 0) for arm in RIGHT for item in ITEMS]
    run_dir = write_run(tmp_path, run, list(RIGHT), turns, [])
    judgments = tmp_path / "judgments.jsonl"
    with open(judgments, "w") as f:
        for arm, right in RIGHT.items():
            for n, item in enumerate(ITEMS):
                row = {"item": item, "arm": arm, "turn": 0, "family": "recall"}
                row |= {"correct": n < right, "judge": "exact-match", "rubric_sha256": "c" * 64}
                f.write(json.dumps(row) + "\n")
    header = tmp_path / "header.toml"
    header.write_text('aa_pairs = [["strong", "strong-again"]]\nmust_fail = ["scrambled"]\n')
    return run_dir, judgments, header


def test_verdicts_and_controls_from_judgments(tmp_path: Path) -> None:
    run_dir, judgments, header = judged(tmp_path)
    out = tmp_path / "out"
    done = harness(
        "report", str(run_dir), "--out", str(out), "--format", "md", "--judgments", str(judgments),
        "--header", str(header), "--resamples", "2000",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    markdown = (out / "report.md").read_text()
    results = markdown.split("## 6 Results per family")[1].split("## 7 ")[0]
    # The interval's brackets are escaped (harness.report.formats.md_escape): they render as typed.
    assert "| recall | correct | 0/1 | strong | 30 | 0.9000 | \\[" in results
    assert "| recall | correct | 0/1 | weak | 30 | 0.3333 | \\[" in results
    verdicts = markdown.split("## 7 Pairwise verdicts")[1].split("## 8 ")[0]
    row = next(line for line in verdicts.splitlines() if "| strong - weak |" in line)
    # Hand-computed: (27 - 10) / 30 paired differences; McNemar's 17 discordant pairs, all one way.
    assert "+0.5667" in row and row.endswith("| strong better |")
    low, high = map(float, re.findall(r"\\\[([+-][\d.]+), ([+-][\d.]+)\\\]", row)[0])
    assert 0 < low < 0.5667 < high
    assert "A/A control failed: two replicates of strong differ" in verdicts
    assert "must-fail control scrambled was not beaten by strong" in verdicts
    assert "c" * 64 in markdown.split("## 13 ")[1]  # the rubric hash in the appendix


def test_judged_items_dropped_for_infrastructure_are_left_out(tmp_path: Path) -> None:
    run_dir, judgments, _ = judged(tmp_path)
    turns = (run_dir / "turns.jsonl").read_text().splitlines()
    failed = [json.loads(line) for line in turns]
    for row in failed:
        if row["arm"] == "weak" and row["item"] == "q00":
            row["outcome"] = "infra_failed"
    (run_dir / "turns.jsonl").write_text("".join(json.dumps(r) + "\n" for r in failed))
    out = tmp_path / "out"
    done = harness(
        "report", str(run_dir), "--out", str(out), "--format", "md",
        "--judgments", str(judgments), "--resamples", "200",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    results = (out / "report.md").read_text().split("## 6 Results per family")[1].split("## 7 ")[0]
    assert "| recall | correct | 0/1 | strong | 29 | 0.8966 | \\[" in results  # 26 of 29 left
