"""Memory controls: an arm that forgets what it was told misses, even when every turn is `done`.

Real runs of the harness CLI on the local backend (real proxy, stubs) with the `bare` reference
arm twice: with its default window it carries the first turn into the recall turn's main call;
with a window of one message it keeps nothing, like an engine that stored nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.errors import HarnessError
from harness.study import load_study
from tests.helpers.studies import harness, header, only_run, read_jsonl, toy_arm, write_study

pytestmark = pytest.mark.integration

BARE = {"command": "python -m arms.bare", "env": {"ARM_MAX_TOKENS": "64"}}
FORGETFUL = {"command": "python -m arms.bare", "env": {"ARM_MAX_TOKENS": "64", "ARM_WINDOW": "1"}}
LISBON = {
    "id": "lisbon",
    "clock": "2024-05-01T10:00:00",
    "turns": [
        {"user": "My sister lives in Lisbon with her two cats."},
        {"user": "Where does my sister live?", "expect": ["lisbon", "cats"]},
        {"user": "Thanks.", "expect_regex": "two (cats|dogs)"},
    ],
}


def _record(
    tmp_path: Path,
    arms: dict[str, dict[str, Any]],
    items: list[dict[str, Any]],
    *flags: str,
    exit_code: int = 0,
) -> tuple[Path, str]:
    study = write_study(tmp_path / "study", arms, items, deadline_ms=20000)
    runs = tmp_path / "runs"
    done = harness("record", str(study), "--run-dir", str(runs), "--isolation", "local", *flags)
    assert done.returncode == exit_code, done.stdout + done.stderr[-3000:]
    return only_run(runs), done.stdout


def test_an_arm_that_keeps_nothing_misses_and_fails_the_run(tmp_path: Path) -> None:
    run, summary = _record(tmp_path, {"bare": BARE, "forgetful": FORGETFUL}, [LISBON], exit_code=1)
    turns = {(t["arm"], t["turn"]): t for t in read_jsonl(run / "turns.jsonl")}
    # Every turn ran to the end: only the control tells the two arms apart.
    assert {t["outcome"] for t in turns.values()} == {"done"}
    assert turns["bare", 0]["memory_miss"] is None  # no control on the telling turn
    assert turns["bare", 1]["memory_miss"] == []
    assert turns["bare", 2]["memory_miss"] == []
    assert turns["forgetful", 1]["memory_miss"] == ["lisbon", "cats"]
    assert turns["forgetful", 2]["memory_miss"] == ["/two (cats|dogs)/"]
    assert header(run)["study"]["memory_miss"] == {"bare": 0, "forgetful": 2}
    assert "memory controls missed (turns per arm): bare 0, forgetful 2" in summary
    # Every turn was `done`, yet the run fails, naming the arm that forgot (not the one that
    # remembered): a gate of this study would otherwise certify a memory that stores nothing.
    assert ": FAILED" in summary.splitlines()[0]
    assert "FAILED: memory controls missed: forgetful 2 (" in summary
    assert header(run)["study"]["passed"] is False


def test_allow_misses_passes_the_run_and_still_counts_them(tmp_path: Path) -> None:
    run, summary = _record(tmp_path, {"forgetful": FORGETFUL}, [LISBON], "--allow-misses")
    assert summary.splitlines()[0].endswith(": passed")
    assert "memory controls missed: forgetful 2 (allowed by --allow-misses)" in summary
    assert "FAILED" not in summary
    study = header(run)["study"]
    assert (study["passed"], study["allow_misses"], study["memory_miss"]) == (
        True,
        True,
        {"forgetful": 2},
    )


def test_a_word_in_the_reply_counts_as_surfaced(tmp_path: Path) -> None:
    # The toy arm makes no model call at all: its reply is the only place to look.
    item = {
        "id": "echo",
        "clock": "2024-05-01T10:00:00",
        "turns": [{"user": "echo Lisbon"}, {"user": "echo Porto", "expect_regex": "P.rto"}],
    }
    run, _ = _record(tmp_path, {"toy": toy_arm()}, [item])
    assert [t["memory_miss"] for t in read_jsonl(run / "turns.jsonl")] == [None, []]
    assert header(run)["study"]["memory_miss"] == {"toy": 0}


def test_a_study_without_controls_shows_none(tmp_path: Path) -> None:
    item = {"id": "echo", "clock": "2024-05-01T10:00:00", "turns": [{"user": "echo hi"}]}
    run, summary = _record(tmp_path, {"toy": toy_arm()}, [item])
    assert header(run)["study"]["memory_miss"] == {}
    assert "memory controls" not in summary


@pytest.mark.parametrize(
    ("turn", "words"),
    [
        # The word is in the turn's own message, so it reaches every arm's main call anyway.
        ({"user": "Is Lisbon sunny?", "expect": ["LISBON"]}, ["expect ['LISBON']", "own text"]),
        ({"user": "x", "addon": "Say cats.", "expect": ["cats"]}, ["own text"]),
        ({"user": "x", "expect": [" "]}, ["expected word is empty"]),
        ({"user": "x", "expect_regex": "(unclosed"}, ["expect_regex", "not a regular expression"]),
        ({"user": "x", "expect": "Lisbon"}, ["expect", "valid list"]),
    ],
)
def test_a_control_that_cannot_fail_or_cannot_run_is_refused_at_load(
    tmp_path: Path, turn: dict[str, object], words: list[str]
) -> None:
    item = {"id": "i", "clock": "2024-05-01T10:00:00", "turns": [{"user": "hello"}, turn]}
    path = write_study(tmp_path, {"a": toy_arm()}, [item])
    with pytest.raises(HarnessError) as e:
        load_study(path)
    assert "items.jsonl:1" in str(e.value)
    for word in words:
        assert word in str(e.value)


def test_a_gate_with_allow_misses_passes_and_its_replay_is_judged_alike(tmp_path: Path) -> None:
    """The flag reaches the gate's record runs (without it each fails on its misses, as the
    first test shows, and a gate fails on a run that did not pass) and a replay of one."""
    study = write_study(tmp_path / "study", {"forgetful": FORGETFUL}, [LISBON], deadline_ms=20000)
    runs = tmp_path / "allowed"
    allowed = harness(
        "gate", str(study), "--run-dir", str(runs), "--isolation", "local", "--allow-misses"
    )
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr[-3000:]
    first = sorted(p for p in runs.iterdir() if (p / "run.json").exists())[0]
    assert header(first)["study"]["allow_misses"] is True
    # The replay of a run recorded with --allow-misses is judged as that run was.
    replay = harness("replay", str(first), "--run-dir", str(runs), "--isolation", "local")
    assert replay.returncode == 0, replay.stdout + replay.stderr[-3000:]
