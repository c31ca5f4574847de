"""An agent framework per language runs its two-tool agent loop, `tool_choice` unset, through
record mode end to end (issue 21), then the gate and a replay pass: openai-agents in Python and
the Vercel AI SDK in Node, each as a study arm on the local backend, as their docs write an
agent. The stubs call the tool that fits each user message, with arguments from the message,
and answer with the tool's result once it is in; no turn loops.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rundir.calls.packread import PackReader
from tests.helpers.studies import harness, header, read_jsonl, write_study
from tests.libraries.conftest import REPO

pytestmark = pytest.mark.integration

ITEM = {
    "id": "errands",
    "clock": "2024-05-01T10:00:00",
    "turns": [
        {"user": "What is the weather in Lisbon right now?"},
        {"user": "How much is 20 euros in US dollars?"},
    ],
}


def _tool_calls(body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(name, arguments) of the function calls in a Responses reply."""
    return [
        (item["name"], json.loads(item["arguments"]))
        for item in body.get("output", [])
        if item.get("type") == "function_call"
    ]


def _record_gate_replay(tmp_path: Path, name: str, arm: dict[str, Any]) -> Path:
    """The gate's two record runs (a record run each, compared), then a replay of the first;
    returns that record run."""
    study = write_study(tmp_path / "study", {name: arm}, [ITEM], deadline_ms=60000)
    runs = tmp_path / "runs"
    gate = harness("gate", str(study), "--run-dir", str(runs), "--isolation", "local")
    assert gate.returncode == 0, gate.stdout + gate.stderr[-3000:]
    assert "PASSED" in gate.stdout.splitlines()[0]
    recorded = sorted(p for p in runs.iterdir() if (p / "run.json").exists())
    assert len(recorded) == 2 and all(header(p)["study"]["passed"] for p in recorded)
    replay = harness("replay", str(recorded[0]), "--run-dir", str(runs), "--isolation", "local")
    assert replay.returncode == 0, replay.stdout + replay.stderr[-3000:]
    return recorded[0]


def _check_loop(run: Path, weather: str, currency: tuple[str, str]) -> None:
    calls = read_jsonl(run / "calls.jsonl")
    pack = PackReader.open(run)
    turns = read_jsonl(run / "turns.jsonl")
    assert [t["outcome"] for t in turns] == ["done", "done"]
    by_turn: dict[int, list[dict[str, Any]]] = {}
    for call in calls:
        assert (call["route"], call["status"]) == ("openai.responses", 200), call
        by_turn.setdefault(call["turn"], []).append(call)
    # One call that asks for the tool, one that answers with its result: no loop.
    assert sorted(by_turn) == [0, 1] and [len(by_turn[t]) for t in (0, 1)] == [2, 2]
    first = [json.loads(pack.get(by_turn[t][0]["response_hash"])) for t in (0, 1)]
    requests = [json.loads(pack.get(by_turn[t][0]["request_body"])) for t in (0, 1)]
    # The caller left tool_choice unset: openai-agents sends none, the AI SDK its default "auto".
    assert all(r.get("tool_choice", "auto") == "auto" for r in requests)
    assert all(len(r["tools"]) == 2 for r in requests)  # both tools offered each time
    (weather_call,) = _tool_calls(first[0])
    assert weather_call[0] == weather and "Lisbon" in json.dumps(weather_call[1])
    (money_call,) = _tool_calls(first[1])
    assert money_call[0] == currency[0] and money_call[1][currency[1]] == 20
    # The answers use the tools' results.
    assert "21" in turns[0]["text"]
    assert "21.6" in turns[1]["text"]


def test_openai_agents_two_tool_loop_records_gates_and_replays(
    tmp_path: Path, libs_python: Path
) -> None:
    arm = {
        "command": f"{libs_python} -m tests.libraries.agents_arm",
        "env": {"PYTHONPATH": str(REPO), "ARM_MODEL": "gpt-4.1-mini"},
    }
    run = _record_gate_replay(tmp_path, "openai-agents", arm)
    _check_loop(run, "get_weather", ("convert_currency", "amount"))


def test_vercel_ai_sdk_two_tool_loop_records_gates_and_replays(
    tmp_path: Path, ai_sdk_dir: Path, seam_js: Path
) -> None:
    arm = {
        "command": f"node {REPO / 'tests' / 'libraries' / 'ai_sdk_arm.cjs'}",
        "env": {"AI_SDK_DIR": str(ai_sdk_dir), "SEAM_JS": str(seam_js)},
    }
    run = _record_gate_replay(tmp_path, "ai-sdk", arm)
    _check_loop(run, "getWeather", ("convertCurrency", "amount"))
