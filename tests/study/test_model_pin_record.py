"""The model pin checked before money (issue 36 item 4): in record mode a main call asking for a
model other than `[pins.models] main` is flagged `wrong_model` and fails its turn, as its paid
run would (the stubs answer as the model asked for); `subject` and the main pin name one model,
or the study is refused at load."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.study import load_study
from tests.helpers.gate_studies import GATE_ARM, ITEMS
from tests.helpers.studies import harness, only_run, read_jsonl
from tests.study_builder import StudyBuilder


def _study(folder: Path, **fields: object) -> Path:
    builder = StudyBuilder(name="pin", items=ITEMS, fields={"deadline_ms": 20000, **fields})
    return builder.arm("toy", f"python {GATE_ARM}").write(folder)  # asks for gpt-4.1-mini


@pytest.mark.integration
def test_a_record_run_fails_every_turn_asking_for_another_model(tmp_path: Path) -> None:
    study = _study(tmp_path / "study", pins={"models": {"main": "gpt-4.1"}})
    runs = tmp_path / "runs"
    harness("record", str(study), "--run-dir", str(runs), "--isolation", "local")
    run = only_run(runs)
    turns = read_jsonl(run / "turns.jsonl")
    assert turns and {t["outcome"] for t in turns} == {"wrong_model"}
    assert all("gpt-4.1-mini" in t["error"] for t in turns)
    mains = [c for c in read_jsonl(run / "calls.jsonl") if c["purpose"] == "main"]
    assert mains and all("wrong_model" in c["flags"] for c in mains)


@pytest.mark.integration
def test_a_record_run_asking_for_the_pinned_model_passes(tmp_path: Path) -> None:
    study = _study(tmp_path / "study", pins={"models": {"main": "gpt-4.1-mini"}})
    runs = tmp_path / "runs"
    done = harness("record", str(study), "--run-dir", str(runs), "--isolation", "local")
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    turns = read_jsonl(only_run(runs) / "turns.jsonl")
    assert {t["outcome"] for t in turns} == {"done"}


def test_a_subject_other_than_the_main_pin_is_refused(tmp_path: Path) -> None:
    pins = {"models": {"main": "gpt-4.1"}}
    with pytest.raises(HarnessError, match="name different models"):
        load_study(_study(tmp_path / "a", subject="openai/gpt-4.1-mini", pins=pins))
    assert load_study(_study(tmp_path / "b", subject="openai/gpt-4.1", pins=pins)).file.subject
    dated = {"models": {"main": "gpt-4.1-2025-04-14"}}
    assert load_study(_study(tmp_path / "c", subject="openai/gpt-4.1", pins=dated)).file.subject
