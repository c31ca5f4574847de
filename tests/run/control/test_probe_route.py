"""The arm reads the day's probe decision (harness/run/control/probe_route.py, arms/chat.py):
recording the coupled example with probe.json next to the study saying `compat` puts Z's main calls
on Anthropic's OpenAI-compatible route, saying `messages` on the Messages API, and with no
probe.json Z keeps the compatibility route; the other arms are unaffected. A damaged probe.json
starts no arm."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.run.control.probe_route import PROBE_ROUTE_ENV, probe_env
from rundir.network.probe_file import ProbeCheck, ProbeDecision, write_probe
from tests.helpers.coupled_example import copy_example
from tests.helpers.studies import harness, only_run, read_jsonl


def _decide(path: Path, route: str) -> None:
    passed = route == "compat"
    check = ProbeCheck(name="thinking_honoured", passed=passed, detail="a budget of 10 was refused")
    decision = ProbeDecision(
        probed="2026-12-05T00:00:00Z", base_url="http://127.0.0.1:1/anthropic",
        model="claude-haiku-4-5", checks=[check], route="compat" if passed else "messages",
    )  # fmt: skip
    write_probe(path, decision)


def _z_routes(tmp_path: Path, route: str | None) -> tuple[set[str], set[str]]:
    """(Z's routes, the other arms' routes) in calls.jsonl of a record run."""
    study = copy_example(tmp_path / "study")
    if route is not None:
        _decide(study.parent / "probe.json", route)
    runs = tmp_path / "runs"
    done = harness("record", str(study), "--run-dir", str(runs), "--isolation", "local")
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    calls = read_jsonl(only_run(runs) / "calls.jsonl")
    assert all(c["status"] == 200 for c in calls)
    z = {c["route"] for c in calls if c["arm"] == "Z"}
    others = {c["route"] for c in calls if c["arm"] != "Z"}
    return z, others


@pytest.mark.parametrize(
    ("route", "expected"),
    [("compat", "anthropic.chat"), ("messages", "anthropic.messages"), (None, "anthropic.chat")],
)
def test_z_takes_the_route_the_probe_chose(
    tmp_path: Path, route: str | None, expected: str
) -> None:
    z, others = _z_routes(tmp_path, route)
    assert z == {expected}
    assert others == {"openai.chat"}


def test_the_runs_own_decision_comes_before_the_studys(tmp_path: Path) -> None:
    _decide(tmp_path / "run" / "probe.json", "messages")
    _decide(tmp_path / "study" / "probe.json", "compat")
    assert probe_env(tmp_path / "run", tmp_path / "study" / "study.toml") == {
        PROBE_ROUTE_ENV: "messages"
    }
    assert probe_env(tmp_path / "elsewhere", tmp_path / "nowhere" / "study.toml") == {}


def test_a_damaged_probe_file_starts_no_arm(tmp_path: Path) -> None:
    (tmp_path / "probe.json").write_text(json.dumps({"schema": 1, "route": "sideways"}))
    with pytest.raises(HarnessError, match="not a probe decision"):
        probe_env(tmp_path / "run", tmp_path / "study.toml")
