"""The example TypeScript arm (arms/node/example_arm.ts) in a study on the local backend: the
official openai npm SDK reaches the record proxy by OPENAI_BASE_URL, every turn's call is
metered and attributed, and `harness replay` serves it again from the call log.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from arms.chat import system_prompt
from rundir.calls.packread import PackReader
from tests.helpers.studies import harness, header, only_run, read_jsonl, write_study

pytestmark = pytest.mark.integration

ITEM = {
    "id": "osaka",
    "clock": "2024-09-03T08:15:00",
    "context": "The user travels a lot.",
    "turns": [
        {"user": "I am flying to Osaka on the 20th."},
        {"user": "Where am I flying?", "addon": "Answer in one sentence.", "expect": ["Osaka"]},
    ],
}


def test_the_typescript_arm_is_metered_and_replayed(
    node_dist: Path,
    tmp_path: Path,
) -> None:
    arm = {
        "command": f"node {node_dist / 'dist' / 'example_arm.js'}",
        "env": {"ARM_MODEL": "gpt-4.1-mini", "ARM_MAX_TOKENS": "64"},
    }
    study = write_study(tmp_path / "study", {"node-openai": arm}, [ITEM], deadline_ms=20000)
    runs = tmp_path / "runs"
    done = harness("record", str(study), "--run-dir", str(runs), "--isolation", "local")
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    run = only_run(runs)
    calls = read_jsonl(run / "calls.jsonl")
    assert [(c["arm"], c["item"], c["turn"], c["purpose"]) for c in calls] == [
        ("node-openai", "osaka", 0, "main"),
        ("node-openai", "osaka", 1, "main"),
    ]
    assert all(c["route"] == "openai.chat" and c["stream"] and c["tokens"]["output"] for c in calls)
    # The window carried the first turn: the memory control passes.
    assert header(run)["study"]["memory_miss"] == {"node-openai": 0}
    # Same system prompt as the Python arms (arms/chat.py), from the seam's pinned clock.
    body = json.loads(PackReader.open(run).get(calls[1]["request_body"]))
    expected = system_prompt(datetime(2024, 9, 3, 8, 15), ITEM["context"])  # type: ignore[arg-type]
    assert body["messages"][0] == {"role": "system", "content": expected}
    assert body["messages"][-1]["content"] == "Where am I flying?\n\nAnswer in one sentence."
    turns = read_jsonl(run / "turns.jsonl")
    assert [t["outcome"] for t in turns] == ["done", "done"]

    replay = harness("replay", str(run), "--run-dir", str(runs), "--isolation", "local")
    assert replay.returncode == 0, replay.stdout + replay.stderr[-3000:]
    (replayed,) = [p for p in runs.iterdir() if p != run and (p / "run.json").exists()]
    again = read_jsonl(replayed / "calls.jsonl")
    assert [c["request_hash"] for c in again] == [c["request_hash"] for c in calls]
    assert [t["text"] for t in read_jsonl(replayed / "turns.jsonl")] == [t["text"] for t in turns]


def test_the_typescript_arm_ingests_a_history_into_its_window(
    node_dist: Path,
    tmp_path: Path,
) -> None:
    """Seam v2 from TypeScript: the example arm keeps no state folder, so each question's
    session takes the conversation in (stored = its messages) and its main call carries it."""
    from rundir.turns.ingestions import IngestionRecord, read_ingestions
    from rundir.turns.questions import read_questions
    from tests.datasets.fixtures import locomo_file
    from tests.study_builder import StudyBuilder

    arm = {
        "command": f"node {node_dist / 'dist' / 'example_arm.js'}",
        "env": {"ARM_MODEL": "gpt-4.1-mini", "ARM_MAX_TOKENS": "64"},
    }
    items = {"format": "locomo", "path": "locomo10.json", "n": 2, "seed": 1}
    study = StudyBuilder(arms={"node-openai": arm}).set(items=items).write(tmp_path / "study")
    locomo_file(tmp_path / "study", samples=1, questions=4)
    runs = tmp_path / "runs"
    done = harness("record", str(study), "--run-dir", str(runs), "--isolation", "local")
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    run = only_run(runs)
    ingested = [r for r in read_ingestions(run / "turns.jsonl") if isinstance(r, IngestionRecord)]
    assert [(r.outcome, r.stored) for r in ingested] == [("done", 3)] * 6  # per question, again
    questions = read_questions(run / "questions.jsonl")
    assert [q.evidence_reached for q in questions] == [True, True]
    assert all(q.snapshot_sha256 is None for q in questions)
