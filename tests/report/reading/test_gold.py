"""`harness report --gold FILE`: every arm's answers scored judge-free (normalised exact match)
and NET(λ) with abstentions, without a judgments file and without calling a model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.report_runs import turn, write_run
from tests.helpers.studies import harness

pytestmark = pytest.mark.integration

# (what the arm said, per item): `careful` abstains when unsure, `bold` guesses.
SAID = {
    "careful": ["The Lisbon.", "  lisbon ", "I don't know", "I do not know", "Osaka!"],
    "bold": ["Lisbon", "Porto", "Madrid", "Rome", "osaka"],
}
GOLD = ["Lisbon", ["Lisbon", "Lisboa"], "Cello", "Basil", "Osaka"]


def test_gold_answers_are_scored_by_exact_match_and_net(tmp_path: Path) -> None:
    run = "r-gold"
    turns = [
        turn(run, arm, f"g{n}", 0, text=text)
        for arm, texts in SAID.items()
        for n, text in enumerate(texts)
    ]
    run_dir = write_run(tmp_path, run, list(SAID), turns, [])
    gold = tmp_path / "gold.jsonl"
    gold.write_text(
        "".join(
            json.dumps({"item": f"g{n}", "turn": 0, "gold": g}) + "\n" for n, g in enumerate(GOLD)
        )
    )
    out = tmp_path / "out"
    done = harness(
        "report", str(run_dir), "--out", str(out), "--format", "md", "--gold", str(gold),
        "--resamples", "200",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    results = (out / "report.md").read_text().split("## 6 ")[1].split("## 7 ")[0]
    # careful: 3 right (normalised), 0 wrong, 2 abstained; bold: 2 right, 3 wrong.
    assert "| all | exact match | 0/1 | careful | 5 | 0.6000 |" in results
    assert "| all | exact match | 0/1 | bold | 5 | 0.4000 |" in results
    # NET(λ) = (right - λ·wrong) / n; break-even λ = right / wrong (none when nothing is wrong).
    assert "| all | careful | 3 | 0 | 2 | +0.600 | +0.600 | +0.600 | +0.600 | - |" in results
    assert "| all | bold | 2 | 3 | 0 | -0.200 | -0.800 | -2.600 | -5.600 | 0.667 |" in results
    metrics = (out / "report.md").read_text().split("## 5 ")[1].split("## 6 ")[0]
    assert "| judge-free | exact match | 0/1 | 10 |" in metrics
