"""instructor's JSON mode, dspy's ReAct, langmem's memory manager and litellm's Anthropic
structured output, the real libraries with only `harness proxy serve --mode record`'s exports
and its default stubs (issue 21): each gets the output its protocol asks for, with values from
the conversation, and the calls are logged.

Each library runs as a script of tests/libraries/probes/ in .cache/libs-venv, with the proxy's
exports as its whole pointing (as a user pastes them); the script prints its result as JSON.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rundir.calls.packread import PackReader
from tests.libraries.conftest import library_env
from tests.proxy.proxy_process import ProxyProcess

pytestmark = pytest.mark.integration

PROBES = Path(__file__).with_name("probes")
PROBE_TIMEOUT = 240


@pytest.fixture
def proxy(tmp_path: Path, libs_python: Path) -> Iterator[ProxyProcess]:
    proxy = ProxyProcess(tmp_path / "run", "--mode", "record")
    yield proxy
    proxy.stop()


def probe(libs_python: Path, proxy: ProxyProcess, name: str, tmp_path: Path) -> Any:
    done = subprocess.run(
        [str(libs_python), str(PROBES / f"{name}.py")],
        capture_output=True,
        text=True,
        timeout=PROBE_TIMEOUT,
        cwd=tmp_path,
        env=library_env(**proxy.exports, DSPY_CACHEDIR=str(tmp_path / "dspy-cache")),
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_instructor_json_mode_gets_the_object_the_prompt_describes(
    tmp_path: Path, libs_python: Path, proxy: ProxyProcess
) -> None:
    person = probe(libs_python, proxy, "instructor_json", tmp_path)
    assert person == {"name": "Lena", "age": 34, "city": "Porto"}
    (call,) = proxy.calls(at_least=1)  # valid the first time: no retry
    body = json.loads(PackReader.open(proxy.run_dir).get(call["request_body"]))
    assert body["response_format"] == {"type": "json_object"}


def test_dspy_react_calls_the_fitting_tool_and_finishes(
    tmp_path: Path, libs_python: Path, proxy: ProxyProcess
) -> None:
    result = probe(libs_python, proxy, "dspy_react", tmp_path)
    trajectory = result["trajectory"]
    assert trajectory["tool_name_0"] == "get_weather"
    assert "Lisbon" in json.dumps(trajectory["tool_args_0"])
    assert "21 C" in trajectory["observation_0"]
    names = [v for k, v in trajectory.items() if k.startswith("tool_name_")]
    assert names[-1] == "finish" and names.count("get_weather") == 1  # no loop
    assert "21" in result["answer"]


def test_langmem_stores_the_users_fact_and_recalls_it_by_meaning(
    tmp_path: Path, libs_python: Path, proxy: ProxyProcess
) -> None:
    result = probe(libs_python, proxy, "langmem_recall", tmp_path)
    assert result["stored"], "langmem stored nothing"
    assert any("Lisbon" in json.dumps(v) for v in result["stored"])
    assert "You are" not in json.dumps(result["stored"])  # the user's words, not the prompt's
    assert "Lisbon" in json.dumps(result["found"][0])
    assert {c["route"] for c in proxy.calls()} >= {"openai.chat", "openai.embeddings"}


def test_the_ai_sdk_anthropic_provider_runs_its_tool_loop_on_the_printed_base_url(
    tmp_path: Path, ai_sdk_dir: Path, proxy: ProxyProcess
) -> None:
    """`@ai-sdk/anthropic` posts `${ANTHROPIC_BASE_URL}/messages` (it expects /v1 inside)."""
    done = subprocess.run(
        ["node", str(PROBES / "ai_sdk_anthropic.cjs")],
        capture_output=True,
        text=True,
        timeout=PROBE_TIMEOUT,
        env=library_env(**proxy.exports, AI_SDK_DIR=str(ai_sdk_dir)),
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["calls"] == [["getWeather", {"city": "Lisbon"}]]
    assert result["steps"] == 2 and "21" in result["text"]
    calls = proxy.calls(at_least=2)
    assert [(c["path"], c["status"]) for c in calls] == [("/v1/messages", 200)] * 2


def test_litellm_anthropic_structured_output_is_grounded_json(
    tmp_path: Path, libs_python: Path, proxy: ProxyProcess
) -> None:
    result = probe(libs_python, proxy, "litellm_anthropic_json", tmp_path)
    person = {"name": "Lena", "age": 34, "city": "Porto"}
    assert result == {"plain": person, "streamed": person}
    calls = proxy.calls(at_least=2)
    assert [c["route"] for c in calls] == ["anthropic.messages"] * 2
    reader = PackReader.open(proxy.run_dir)
    for call in calls:  # the beta's top-level field, not a forced tool
        body = json.loads(reader.get(call["request_body"]))
        assert body["output_format"]["type"] == "json_schema" and "tools" not in body
