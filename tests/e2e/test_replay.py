"""`harness replay RUN_DIR` end to end, real processes, no key, no network: a recorded run is
reproduced request for request and turn for turn; an arm that sends one different request makes
the replay name that request and fail; a study file changed since the recording is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.studies import REPO, harness, header, read_jsonl, write_study
from tests.toy_arms import TOY_ARMS

pytestmark = pytest.mark.integration

QUICKSTART = REPO / "examples" / "quickstart" / "study.toml"
REPLAY_ARM = TOY_ARMS / "replay_arm.py"
# Empty keys are no keys: the replay must not need one.
NO_KEYS = {"OPENAI_API_KEY": "", "ANTHROPIC_API_KEY": ""}


def _runs(root: Path) -> dict[str, Path]:
    """Run directories under `root` by mode."""
    return {header(p)["mode"]: p for p in root.iterdir() if (p / "run.json").exists()}


def test_the_quickstart_replays_clean_with_no_key(tmp_path: Path) -> None:
    recorded = harness(
        "record", str(QUICKSTART), "--run-dir", str(tmp_path), "--isolation", "local"
    )
    assert recorded.returncode == 0, recorded.stderr[-3000:]
    source = _runs(tmp_path)["record"]
    replayed = harness("replay", str(source), "--isolation", "local", env=NO_KEYS)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr[-3000:]
    assert "replay CLEAN" in replayed.stdout
    replay = _runs(tmp_path)["replay"]
    comparison = json.loads((replay / "replay.json").read_text())
    assert comparison["clean"] and comparison["source_run"] == str(source)
    assert comparison["calls_recorded"] == comparison["calls_replayed"] > 0
    assert comparison["turns_compared"] == 18
    assert comparison["requests"] == comparison["turns"] == comparison["misses"] == []
    before, after = read_jsonl(source / "calls.jsonl"), read_jsonl(replay / "calls.jsonl")
    assert {c["mode"] for c in after} == {"replay"}
    # Every reply the arms got is the recorded one.
    assert sorted(c["response_hash"] for c in after) == sorted(c["response_hash"] for c in before)
    texts = {
        (t["arm"], t["item"], t["turn"]): t["text"] for t in read_jsonl(source / "turns.jsonl")
    }
    again = {
        (t["arm"], t["item"], t["turn"]): t["text"] for t in read_jsonl(replay / "turns.jsonl")
    }
    assert texts == again and all(texts.values())
    assert (replay / "egress.jsonl").read_text() == ""


def test_a_changed_request_is_named_and_fails_the_replay(tmp_path: Path) -> None:
    switch = tmp_path / "switch"
    arm = {
        "command": f"python {REPLAY_ARM}",
        "env": {
            "ARM_MODEL": "gpt-4.1-mini",
            "ARM_MAX_TOKENS": "64",
            "REPLAY_ARM_SWITCH": str(switch),
        },
    }
    items = [
        {
            "id": item,
            "clock": "2024-05-01T10:00:00",
            "turns": [{"user": f"{item} one"}, {"user": f"{item} two"}],
        }
        for item in ("a", "b")
    ]
    study = write_study(tmp_path / "study", {"toy": arm, "steady": arm}, items)
    runs = tmp_path / "runs"
    recorded = harness("record", str(study), "--run-dir", str(runs), "--isolation", "local")
    assert recorded.returncode == 0, recorded.stderr[-3000:]
    source = _runs(runs)["record"]

    # Both arms read the same switch: item b's second turn now sends another system prompt.
    switch.write_text("b 1 Also mention the weather.")
    replayed = harness("replay", str(source), "--isolation", "local", env=NO_KEYS)
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr[-3000:]
    assert "replay DIVERGED: 2 request divergence(s)" in replayed.stdout
    comparison = json.loads((_runs(runs)["replay"] / "replay.json").read_text())
    assert not comparison["clean"]
    recorded_calls = {
        (c["arm"], c["item"], c["turn"]): c["request_hash"]
        for c in read_jsonl(source / "calls.jsonl")
    }
    divergences = comparison["requests"]
    assert {(d["arm"], d["item"], d["turn"], d["index"]) for d in divergences} == {
        ("toy", "b", 1, 0),
        ("steady", "b", 1, 0),
    }
    for d in divergences:
        assert d["recorded"]["request_hash"] == recorded_calls[(d["arm"], "b", 1)]
        assert d["replayed"]["request_hash"] != d["recorded"]["request_hash"]
        assert d["replayed"]["route"] == "openai.chat"
        assert d["replayed"]["request_hash"][:16] in replayed.stdout
    # The changed request was answered by nobody: a miss, and the turn failed at the arm.
    assert sorted(m["request_hash"] for m in comparison["misses"]) == sorted(
        d["replayed"]["request_hash"] for d in divergences
    )
    assert {
        (t["arm"], t["item"], t["turn"], t["replayed_outcome"]) for t in comparison["turns"]
    } == {
        ("toy", "b", 1, "error"),
        ("steady", "b", 1, "error"),
    }

    # The replay re-runs the recorded script only: an edited study file is refused up front.
    study.write_text(study.read_text() + "# edited\n")
    refused = harness("replay", str(source), "--isolation", "local", env=NO_KEYS)
    assert refused.returncode == 2
    assert "study file" in refused.stderr and "changed since" in refused.stderr
