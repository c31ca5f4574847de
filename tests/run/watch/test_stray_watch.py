"""Refused connections seen while a run goes on, through a real local backend reading the proxy's
refusal log in a run directory: each seen once, charged to the turn in flight, its moment kept
for the report, and the first one halting the run when the study says so."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
import structlog

from harness.isolation.egress import proxy_log
from harness.isolation.local import LocalBackend
from harness.run.watch.stray_watch import StrayConnection, StrayWatch, strongest
from harness.run.watch.strays import Key


def refuse(run_dir: Path, arm: str, destination: str) -> None:
    """A refusal as the proxy's forward guard appends it (proxy/app/forward_guard.py)."""
    entry = {
        "schema": 1,
        "arm": arm,
        "destination": destination,
        "time": datetime.now(UTC).isoformat(timespec="microseconds"),
        "source": "proxy",
    }
    with proxy_log(run_dir).open("a") as log:
        log.write(json.dumps(entry) + "\n")


def watch(run_dir: Path, halt: bool, seen: set[Key] | None = None) -> StrayWatch:
    return StrayWatch(LocalBackend(run_dir), "r1", run_dir, set() if seen is None else seen, halt)


def seen_rows(run_dir: Path) -> list[dict[str, object]]:
    lines = (run_dir / "strays_seen.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


async def test_each_refusal_is_seen_once_and_charged_to_the_turn_in_flight(tmp_path: Path) -> None:
    tally: set[Key] = set()
    strays = watch(tmp_path, halt=False, seen=tally)
    refuse(tmp_path, "leaky", "us.i.posthog.com:443")
    with structlog.testing.capture_logs() as logged:
        assert [e["destination"] for e in await strays.new("start-up")] == ["us.i.posthog.com:443"]
    assert [(line["event"], line["during"]) for line in logged] == [
        ("stray connection refused", "start-up")
    ]
    strays.turn_starts("leaky", "i1", 0)
    refuse(tmp_path, "leaky", "github.com:443")
    refuse(tmp_path, "other", "example.test:80")
    new = await strays.new("leaky i1 turn 0")
    assert sorted(str(e["destination"]) for e in new) == ["example.test:80", "github.com:443"]
    assert await strays.new("leaky i1 turn 0") == []  # a second look names nothing again
    assert strays.this_turn == {"leaky": 1, "other": 1}
    assert len(tally) == 3  # the run's tally holds every one seen, for the teardown read
    rows = seen_rows(tmp_path)
    assert [(r["during"], r["running_arm"], r["item"], r["turn"]) for r in rows] == [
        ("start-up", None, None, None),
        ("turn", "leaky", "i1", 0),
        ("turn", "leaky", "i1", 0),
    ]
    strays.turn_starts("leaky", "i1", 1)
    assert strays.this_turn == {}  # a new turn starts its count afresh


async def test_a_refusal_while_arms_start_halts_only_a_halting_run(tmp_path: Path) -> None:
    failing, halting = tmp_path / "fail", tmp_path / "halt"
    for run_dir, halt in ((failing, False), (halting, True)):
        run_dir.mkdir()
        strays = watch(run_dir, halt)
        await strays.halt_if_new("start-up")  # nothing refused yet: nothing happens
        refuse(run_dir, "leaky", "evil.example:443")
        if halt:
            with pytest.raises(StrayConnection) as halted:
                await strays.halt_if_new("start-up")
            assert (halted.value.arm, halted.value.destination) == ("leaky", "evil.example:443")
            assert str(halted.value) == "arm 'leaky' tried to reach evil.example:443 (proxy)"
        else:
            await strays.halt_if_new("start-up")
            assert strays.this_turn == {"leaky": 1}  # counted; the run fails at its end


def test_a_halt_names_the_harnesss_own_evidence_before_what_an_arm_could_forge() -> None:
    forged = {"arm": "a", "destination": "x:1", "source": "guard", "flags": ["forged"]}
    guard = {"arm": "a", "destination": "y:2", "source": "guard"}
    kernel = {"arm": "a", "destination": "z:3", "source": "kernel", "protocol": "udp"}
    assert strongest([forged, guard, kernel]) is kernel
    assert strongest([forged, guard]) is guard
    assert str(StrayConnection(kernel)) == "arm 'a' tried to reach z:3 (udp, kernel)"
    assert str(StrayConnection(forged)) == "arm 'a' tried to reach x:1 (guard, flagged forged)"
