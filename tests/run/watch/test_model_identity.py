"""Model identity (issue 25 item 5): `[pins.models]` pins each purpose's model; in live mode the
fake vendor serves another model on one main call, the proxy flags it `wrong_model`, that turn
fails in that arm, named, the others pass, and `harness audit` finds it (and finds a turn that
hides it)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.fakevendor.server import FakeVendor
from tests.helpers.gate_studies import GATE_ARM, ITEMS
from tests.helpers.studies import harness, read_jsonl
from tests.proxy.live_helpers import STUDY_KEYS
from tests.study_builder import StudyBuilder

pytestmark = pytest.mark.integration


def test_a_main_call_served_by_another_model_fails_its_turn_and_the_audit_finds_it(
    tmp_path: Path,
) -> None:
    runs = tmp_path / "runs"
    with FakeVendor() as vendor:
        fields = {
            "deadline_ms": 20000,
            "vendors": {"openai": vendor.url},
            "pins": {"models": {"main": "gpt-4.1-mini"}},
        }
        study = (
            StudyBuilder(name="identity", items=ITEMS, fields=fields)
            .arm("toy", f"python {GATE_ARM}")
            .write(tmp_path / "study")
        )
        # One of the arm's calls (the second the vendor sees) is answered by another model.
        vendor.script([None, "served_model=gpt-4o-2024-08-06"])
        for command in (["gate", str(study)], ["live", str(study), "--cap", "2"]):
            done = harness(*command, "--run-dir", str(runs), "--isolation", "local", env=STUDY_KEYS)
            if command[0] == "gate":
                assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    lives = [p for p in runs.glob("*/run.json") if json.loads(p.read_text())["mode"] == "live"]
    assert len(lives) == 1, done.stdout + done.stderr[-3000:]
    run = lives[0].parent
    calls = read_jsonl(run / "calls.jsonl")
    wrong = [c for c in calls if "wrong_model" in c["flags"]]
    assert [(c["purpose"], c["model_served"]) for c in wrong] == [("main", "gpt-4o-2024-08-06")]
    failed = (wrong[0]["item"], wrong[0]["turn"])
    turns = {(t["item"], t["turn"]): t for t in read_jsonl(run / "turns.jsonl")}
    assert turns[failed]["outcome"] == "wrong_model" and turns[failed]["arm"] == "toy"
    assert f"call {wrong[0]['seq']}" in turns[failed]["error"]
    assert "gpt-4o-2024-08-06" in turns[failed]["error"]
    others = [t["outcome"] for key, t in turns.items() if key != failed]
    assert others == ["done", "done"]

    audit = harness("audit", str(run))
    record = json.loads((run / "audit.json").read_text())
    assert any("gpt-4o-2024-08-06" in n and "pinned gpt-4.1-mini" in n for n in record["notes"])
    assert not [d for d in record["discrepancies"] if d["check"] == "model"], audit.stdout

    # The report's pins table: requested vs served for the pinned purpose, the one wrong call.
    out = tmp_path / "report"
    assert harness("report", str(run), "--out", str(out)).returncode == 0
    markdown = (out / "report.md").read_text()
    row = next(line for line in markdown.splitlines() if line.startswith("| main | gpt-4.1-mini"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2] == "gpt-4.1-mini" and "gpt-4o-2024-08-06" in cells[3]
    assert cells[4] == str(len(calls)) and cells[5] == "1"

    # A turns.jsonl that hides the failure is caught by the model check (and the manifest).
    copy = tmp_path / "tampered"
    shutil.copytree(run, copy)
    (copy / "audit.json").unlink()
    lines = (copy / "turns.jsonl").read_text().replace('"wrong_model"', '"done"')
    (copy / "turns.jsonl").write_text(lines)
    harness("audit", str(copy))
    tampered = json.loads((copy / "audit.json").read_text())
    model = [d for d in tampered["discrepancies"] if d["check"] == "model"]
    assert len(model) == 1 and "not wrong_model" in model[0]["detail"]
