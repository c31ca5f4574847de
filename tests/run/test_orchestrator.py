"""The orchestrator through the real CLI, a real proxy and real arm processes (local backend)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from harness.run.orchestrator import arm_order
from tests.helpers.studies import harness, header, only_run, read_jsonl, toy_arm, write_study

pytestmark = pytest.mark.integration

DEADLINE_MS = 1000
# The cut turn must end within this of the deadline, and the next turn must arrive at the arm
# within this of the cut: process scheduling on a loaded 2-core machine, not the harness.
TOLERANCE_S = 0.5


def test_arm_order_differs_between_items_and_repeats_for_a_seed() -> None:
    arms = ["a", "b", "c", "d"]
    orders = {item: arm_order(7, item, arms) for item in (f"item{n}" for n in range(12))}
    assert len({tuple(order) for order in orders.values()}) > 1
    assert all(sorted(order) == arms for order in orders.values())
    assert orders == {item: arm_order(7, item, arms) for item in orders}
    assert [arm_order(8, item, arms) for item in orders] != list(orders.values())


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """One study: a deadline cut, a clock report and a self-kill, on two arms."""
    folder = tmp_path_factory.mktemp("study")
    marker = folder / "died"
    items = [
        {
            "id": "cut",
            "clock": "2024-05-01T10:00:00",
            "turns": [{"user": "sleep 30"}, {"user": "gap"}, {"user": "clock"}],
        },
        {"id": "other-day", "clock": "2023-01-02T03:04:05", "turns": [{"user": "clock"}]},
        {
            "id": "kill",
            "clock": "2024-05-01T10:00:00",
            "turns": [{"user": "echo one"}, {"user": f"die-once {marker}"}, {"user": "echo 3"}],
        },
    ]
    study = write_study(
        folder,
        {"a": toy_arm(), "b": toy_arm()},
        items,
        deadline_ms=DEADLINE_MS,
        arm_order_seed=3,
    )
    runs = folder / "runs"
    done = harness("record", str(study), "--run-dir", str(runs), "--arm", "a", "--arm", "b")
    run_dir = only_run(runs)
    turns = read_jsonl(run_dir / "turns.jsonl")
    yield {"done": done, "dir": run_dir, "turns": turns, "header": header(run_dir)}


def turn(run: dict[str, Any], item: str, arm: str, number: int) -> dict[str, Any]:
    found = [
        t for t in run["turns"] if t["item"] == item and t["arm"] == arm and t["turn"] == number
    ]
    assert len(found) == 1, (item, arm, number, run["done"].stderr[-3000:])
    return found[0]


def test_the_run_completes_and_says_how_it_was_isolated(run: dict[str, Any]) -> None:
    assert run["done"].returncode == 0, run["done"].stderr[-3000:]
    study = run["header"]["study"]
    assert study["passed"] is True and study["isolation"] == "local"
    assert study["seeds"] == {"arm_order_seed": 3}
    assert run["header"]["ended"] is not None
    assert not (run["dir"] / "pids.json").exists()  # every process was stopped


def test_a_turn_past_the_deadline_is_cut_with_its_partial_text(run: dict[str, Any]) -> None:
    for arm in ("a", "b"):
        cut = turn(run, "cut", arm, 0)
        assert cut["outcome"] == "cut"
        assert cut["text"] == "partial "
        assert cut["first_token_s"] < DEADLINE_MS / 1000
        # The next turn reached the arm one deadline after the cut turn, give or take.
        gap = float(turn(run, "cut", arm, 1)["text"])
        assert abs(gap - DEADLINE_MS / 1000) <= TOLERANCE_S
        assert turn(run, "cut", arm, 1)["outcome"] == "done"


def test_arms_see_the_items_pinned_date(run: dict[str, Any]) -> None:
    if run["header"]["study"]["clock_pinning"] != "libfaketime":
        pytest.skip("libfaketime is not installed (apt-get install libfaketime): seam-only clock")
    for item, pinned in (("cut", "2024-05-01T10:00:00"), ("other-day", "2023-01-02T03:04:05")):
        expected = datetime.fromisoformat(pinned).replace(tzinfo=UTC).timestamp()
        for arm in ("a", "b"):
            number = 2 if item == "cut" else 0
            report = json.loads(turn(run, item, arm, number)["text"])
            # The clock starts at the item's time when the item starts and runs normally.
            assert 0 <= report["time"] - expected < 60
            assert report["now"].startswith(pinned[:10])


def test_a_killed_arm_is_an_infrastructure_failure_retried_and_counted(
    run: dict[str, Any],
) -> None:
    # The marker is shared: the first arm to run item "kill" dies once, the other never does.
    first = arm_order(3, "kill", ["a", "b"])[0]
    second = "b" if first == "a" else "a"
    assert run["header"]["study"]["infra_failures"] == 1
    for number, text in enumerate(["one", "survived", "3"]):
        retried = turn(run, "kill", first, number)
        assert (retried["outcome"], retried["attempts"]) == ("done", 2)
        assert retried["text"].endswith(text)
        assert turn(run, "kill", second, number)["attempts"] == 1
    assert run["header"]["study"]["outcomes"] == {"done": 12, "cut": 2}


def test_the_proxy_was_told_each_turn(run: dict[str, Any]) -> None:
    # The toy arm makes no model calls: the call log exists and is empty, and control worked
    # (a control failure would have been an infrastructure failure on every turn).
    assert (run["dir"] / "calls.jsonl").exists()
    assert run["header"]["study"]["outcomes"].get("infra_failed") is None


def test_a_stray_connection_is_refused_logged_and_fails_the_run(
    tmp_path: Path, listener: tuple[int, list[str]]
) -> None:
    port, accepted = listener
    items = [
        {
            "id": "stray",
            "clock": "2024-05-01T10:00:00",
            "turns": [
                {"user": f"connect 127.0.0.1 {port}"},
                {"user": f"connect localhost {port}"},
                {"user": "connect vendor.example 443"},
            ],
        }
    ]
    # on_stray = "fail": every turn runs and the run fails at its end (the default, "halt",
    # stops at the first one: tests/run/watch/test_stray_halt.py).
    study = write_study(tmp_path, {"leaky": toy_arm()}, items, deadline_ms=5000, on_stray="fail")
    done = harness("record", str(study), "--run-dir", str(tmp_path / "runs"))
    assert done.returncode == 1, done.stderr[-3000:]
    assert "stray connection" in done.stdout
    run_dir = only_run(tmp_path / "runs")
    turns = read_jsonl(run_dir / "turns.jsonl")
    assert all(t["text"].startswith("refused: ") for t in turns), turns
    # Each turn is charged with the attempt it made, and the log named it as it happened.
    assert [t["stray_connections"] for t in turns] == [1, 1, 1]
    assert done.stderr.count('"event": "stray connection refused"') == 3, done.stderr[-3000:]
    egress = read_jsonl(run_dir / "egress.jsonl")
    assert [e["destination"] for e in egress] == [
        f"127.0.0.1:{port}",
        f"127.0.0.1:{port}",  # a loopback name resolves; its connect is refused
        "vendor.example:443",
    ]
    assert {e["arm"] for e in egress} == {"leaky"} and all(e["time"] for e in egress)
    study_header = header(run_dir)["study"]
    assert study_header["passed"] is False and study_header["stray_connections"] == 3
    assert accepted == []


def test_ctrl_c_settles_the_turn_in_flight_and_stops_every_process(tmp_path: Path) -> None:
    import os
    import signal
    import time

    from tests.helpers.studies import spawn_harness

    items = [
        {"id": f"i{n}", "clock": "2024-05-01T10:00:00", "turns": [{"user": "sleep 2"}]}
        for n in range(6)
    ]
    study = write_study(tmp_path, {"a": toy_arm()}, items, deadline_ms=10000)
    runs = tmp_path / "runs"
    process = spawn_harness("record", str(study), "--run-dir", str(runs))
    deadline = time.monotonic() + 120
    while not list(runs.glob("*/turns.jsonl")) or not next(runs.glob("*/turns.jsonl")).read_text():
        assert time.monotonic() < deadline and process.poll() is None
        time.sleep(0.1)
    run_dir = only_run(runs)
    arm_pid = json.loads((run_dir / "pids.json").read_text())["processes"][-1]["pid"]
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130, err[-3000:]
    assert "interrupted" in out
    study_header = header(run_dir)["study"]
    assert study_header["interrupted"] is True and study_header["passed"] is False
    turns = read_jsonl(run_dir / "turns.jsonl")
    # The turn in flight when Ctrl-C came finished (done, not cut); no later item started.
    assert 1 < len(turns) < len(items) and {t["outcome"] for t in turns} == {"done"}
    assert not (run_dir / "pids.json").exists()
    with pytest.raises(ProcessLookupError):
        os.kill(arm_pid, 0)
