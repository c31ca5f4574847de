"""A stray connection halts the run at once; guard lines are attributed to the arm that wrote
them. Through the real CLI, a real proxy and real arm processes (local backend); the docker
versions are in tests/docker/test_isolation.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.studies import harness, header, only_run, read_jsonl, write_study
from tests.toy_arms import TOY_ARMS

pytestmark = pytest.mark.integration

HOSTILE_ARM = TOY_ARMS / "hostile_arm.py"


def hostile_arm() -> dict[str, str]:
    return {"command": f"python {HOSTILE_ARM}"}


def test_a_stray_connection_halts_the_run_at_once(
    tmp_path: Path, listener: tuple[int, list[str]]
) -> None:
    port, accepted = listener
    items = [
        {
            "id": "first",
            "clock": "2024-05-01T10:00:00",
            # The arm tries the listener, then keeps its turn open for 300 s before it ends it
            # with "and waited": a harness that halts at once never gets those words.
            "turns": [{"user": f"connect-and-wait 127.0.0.1 {port} 300"}, {"user": "echo two"}],
        },
        {"id": "second", "clock": "2024-05-01T10:00:00", "turns": [{"user": "echo three"}]},
    ]
    study = write_study(tmp_path, {"leaky": hostile_arm()}, items, deadline_ms=600000)
    done = harness("record", str(study), "--run-dir", str(tmp_path / "runs"))
    assert done.returncode == 1, done.stdout + done.stderr[-3000:]  # a failed run
    (line,) = [x for x in done.stdout.splitlines() if "halted at once" in x]
    assert "arm 'leaky' tried to reach 127.0.0.1:" in line and "(guard)" in line, line
    assert 'on_stray = "fail"' in line  # it says how to get the old behaviour
    run_dir = only_run(tmp_path / "runs")
    # The turn in flight is marked; no later turn (of this item or the next) ran.
    (turn,) = read_jsonl(run_dir / "turns.jsonl")
    assert (turn["item"], turn["turn"], turn["outcome"]) == ("first", 0, "stray_connection")
    assert turn["stray_connections"] == 1 and "127.0.0.1:" in turn["error"]
    # At once: the turn was cut while the arm still waited, not ended by the arm (no wall-clock
    # bound, which a loaded machine breaks: the arm's own words say whether it was waited for).
    assert "and waited" not in turn["text"], turn["text"]
    study_header = header(run_dir)["study"]
    assert study_header["passed"] is False and study_header["on_stray"] == "halt"
    assert "127.0.0.1:" in study_header["halted"]
    assert accepted == []


def test_on_stray_fail_runs_every_turn_and_fails_at_the_end(
    tmp_path: Path, listener: tuple[int, list[str]]
) -> None:
    port, accepted = listener
    turns = [{"user": f"connect-and-wait 127.0.0.1 {port} 0"}, {"user": "echo two"}]
    items = [{"id": "first", "clock": "2024-05-01T10:00:00", "turns": turns}]
    study = write_study(tmp_path, {"leaky": hostile_arm()}, items, on_stray="fail")
    done = harness("record", str(study), "--run-dir", str(tmp_path / "runs"))
    assert done.returncode == 1, done.stdout + done.stderr[-3000:]
    run_dir = only_run(tmp_path / "runs")
    records = read_jsonl(run_dir / "turns.jsonl")
    assert [(t["outcome"], t["stray_connections"]) for t in records] == [("done", 1), ("done", 0)]
    assert header(run_dir)["study"]["halted"] is None
    if header(run_dir)["study"]["clock_pinning"] == "libfaketime":
        # The guard stamped the arm's pinned clock (the item's 2024 date); egress.jsonl reads it
        # back in real time, as on docker, so teardown strays are told by real times.
        (entry,) = [e for e in read_jsonl(run_dir / "egress.jsonl") if e["source"] == "guard"]
        assert entry["arm_time"].startswith("2024-05-01"), entry
        assert entry["time"][:10] == header(run_dir)["started"][:10], entry
    assert accepted == []


def test_a_guard_line_naming_another_arm_is_the_writers(tmp_path: Path) -> None:
    items = [
        {
            "id": "blame",
            "clock": "2024-05-01T10:00:00",
            "turns": [{"user": "forge victim evil.example:443"}, {"user": "garbage"}],
        }
    ]
    arms = {"forger": hostile_arm(), "victim": hostile_arm()}
    study = write_study(tmp_path, arms, items, on_stray="fail")
    # Only the forger runs: whatever its lines say, the victim must not be blamed.
    done = harness("record", str(study), "--run-dir", str(tmp_path / "runs"), "--arm", "forger")
    assert done.returncode == 1, done.stdout + done.stderr[-3000:]
    run_dir = only_run(tmp_path / "runs")
    egress = read_jsonl(run_dir / "egress.jsonl")
    assert {e["arm"] for e in egress} == {"forger"}, egress
    forged = next(e for e in egress if e.get("claimed_arm") == "victim")
    assert forged["destination"] == "evil.example:443" and forged["flags"] == ["forged"]
    unreadable = next(e for e in egress if e.get("flags") == ["unreadable"])
    assert unreadable["raw"] == "not json {"
    records = read_jsonl(run_dir / "turns.jsonl")
    assert {t["arm"] for t in records} == {"forger"}
    assert [t["stray_connections"] for t in records] == [1, 1]
