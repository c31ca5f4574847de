"""A langmem arm as a user first writes it (tests/libraries/langmem_arm.py) with the `~uuid` mask
(docs/studies.md): on the default stubs it stores the user's fact, recalls it for a question that
shares no word with it (no memory-control miss), and the gate and a replay pass."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rundir.calls.packread import PackReader
from tests.helpers.studies import harness, header, read_jsonl, write_study
from tests.libraries.conftest import REPO

pytestmark = pytest.mark.integration

ITEM = {
    "id": "family",
    "clock": "2024-05-01T10:00:00",
    "turns": [
        {"user": "My sister lives in Lisbon."},
        {"user": "Where does my family live?", "expect": ["Lisbon"]},
    ],
}


def test_langmem_stores_recalls_and_passes_gate_and_replay(
    tmp_path: Path, libs_python: Path
) -> None:
    arm = {
        "command": f"{libs_python} -m tests.libraries.langmem_arm",
        "env": {"PYTHONPATH": str(REPO)},
    }
    study = write_study(
        tmp_path / "study", {"langmem": arm}, [ITEM], deadline_ms=60000, mask=["~uuid"]
    )
    runs = tmp_path / "runs"
    gate = harness("gate", str(study), "--run-dir", str(runs), "--isolation", "local")
    assert gate.returncode == 0, gate.stdout + gate.stderr[-3000:]
    recorded = sorted(p for p in runs.iterdir() if (p / "run.json").exists())
    run = recorded[0]
    assert header(run)["study"]["memory_miss"] == {"langmem": 0}
    calls = read_jsonl(run / "calls.jsonl")
    pack = PackReader.open(run)
    # The manager's extraction called its memory tool with the user's words.
    replies = [pack.get(c["response_hash"]).decode() for c in calls if c["route"] == "openai.chat"]
    assert any("Lisbon" in r and "tool_calls" in r for r in replies), replies
    # The recall turn's extraction (PatchDoc beside Memory, a call required) stores no question:
    # it patches the shown memory with no operations.
    assert not any("Where does my family live" in r and "tool_calls" in r for r in replies)
    assert any('\\"patches\\":[]' in r for r in replies), replies
    # The recall turn's main call carried the memory into the system prompt.
    recall = next(c for c in calls if c["turn"] == 1 and c["route"] == "openai.chat")
    body = json.loads(pack.get(recall["request_body"]))
    assert "Lisbon" in body["messages"][0]["content"]
    replay = harness("replay", str(run), "--run-dir", str(runs), "--isolation", "local")
    assert replay.returncode == 0, replay.stdout + replay.stderr[-3000:]
