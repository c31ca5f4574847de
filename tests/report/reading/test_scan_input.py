"""`harness report --scan`: an arm that `harness scan` voided (a canary served before its event)
is marked VOID and left out of every result and verdict."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.report_runs import turn, write_run
from tests.helpers.studies import harness

pytestmark = pytest.mark.integration

ITEMS = [f"q{n:02d}" for n in range(12)]


def test_a_canary_echoed_before_its_event_voids_the_arm_in_the_report(tmp_path: Path) -> None:
    run = "r-canary"
    turns = []
    for arm in ("honest", "leaky", "other"):
        for item in ITEMS:
            # The canary is planted in q05's second turn; leaky says it in the first.
            early = arm == "leaky" and item == "q05"
            turns.append(turn(run, arm, item, 0, text="it is ZEBRA-7731" if early else "ok"))
            turns.append(turn(run, arm, item, 1, text="noted"))
    run_dir = write_run(tmp_path, run, ["honest", "leaky", "other"], turns, [])
    canaries = tmp_path / "canaries.jsonl"
    canaries.write_text('{"token": "ZEBRA-7731", "item": "q05", "event_turn": 1}\n')
    scan = tmp_path / "scan.json"
    scanned = harness("scan", str(run_dir), "--canaries", str(canaries), "--out", str(scan))
    assert scanned.returncode == 1, scanned.stdout + scanned.stderr[-2000:]
    judgments = tmp_path / "judgments.jsonl"
    with open(judgments, "w") as f:
        for arm in ("honest", "leaky", "other"):
            for n, item in enumerate(ITEMS):
                # leaky looks best of all: exactly what a leaked answer key does.
                right = arm == "leaky" or n % 2 == 0
                f.write(json.dumps({"item": item, "arm": arm, "turn": 0, "correct": right}) + "\n")
    out = tmp_path / "out"
    done = harness(
        "report", str(run_dir), "--out", str(out), "--format", "md", "--scan", str(scan),
        "--judgments", str(judgments), "--resamples", "200",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    markdown = (out / "report.md").read_text()
    arms = markdown.split("## 3 The arms")[1].split("## 4 ")[0]
    assert "| leaky | 24 | 0 | 0 | VOID |" in arms and "| honest | 24 | 0 | 0 | clean |" in arms
    results = markdown.split("## 6 ")[1].split("## 7 ")[0]
    assert "| all | correct | 0/1 | honest |" in results and "| leaky |" not in results
    verdicts = markdown.split("## 7 ")[1].split("## 8 ")[0]
    assert "honest - other" in verdicts and "leaky" not in verdicts.split("leaky is VOID")[0]
    assert "leaky is VOID" in verdicts
    assert "leaky is VOID: a canary was served before its event" in markdown.split("## 12 ")[1]
    assert f"{scan} (SHA-256" in arms
