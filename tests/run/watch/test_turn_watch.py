"""Watching a running turn, on a real local backend: a real proxy and a real hostile arm
(tests/toy_arms/hostile_arm.py) whose refused connections its guard logs. A halting run stops a
turn as soon as the watch sees its stray, keeping the answer of a turn that ends within the
grace; a failing run lets the turn finish; a failure is the machinery's when the arm's process is
gone or its seam refused the connection."""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import httpx
import pytest

from arms.client import SeamClient, SeamError
from arms.seam import OpenSession, Turn
from harness.isolation.base import ProxySettings
from harness.isolation.local import LocalBackend
from harness.run.watch import turn_watch
from harness.run.watch.stray_watch import StrayConnection, StrayWatch
from harness.run.watch.turn_watch import DEATH_GRACE_S, WATCH_S, TurnWatch
from harness.study import ArmSpec
from tests.toy_arms import TOY_ARMS

pytestmark = pytest.mark.integration

HOSTILE_ARM = TOY_ARMS / "hostile_arm.py"
CLOCK = datetime(2024, 5, 1, 10, 0, 0)
DEADLINE_S = 60.0


@dataclass
class Running:
    backend: LocalBackend
    client: SeamClient
    pid: int
    run_dir: Path

    def watch(self, halt: bool) -> TurnWatch:
        strays = StrayWatch(self.backend, "r1", self.run_dir, set(), halt)
        return TurnWatch(self.backend, strays)


@pytest.fixture
async def arm(tmp_path: Path) -> AsyncIterator[Running]:
    """One hostile arm `a` behind its proxy, its session `s1` open."""
    backend = LocalBackend(tmp_path, work_dir=tmp_path)
    settings = ProxySettings(run_dir=tmp_path, run_id="r1", mode="record", arms=["a"])
    try:
        proxy = await backend.start_proxy(settings)
        spec = ArmSpec(command=[sys.executable, str(HOSTILE_ARM)])
        handle = await backend.start_arm("a", spec, proxy)
        assert handle.pid is not None
        client = SeamClient(handle.seam_url)
        try:
            await client.open_session(OpenSession(session_id="s1", item_id="i1", clock=CLOCK))
            yield Running(backend, client, handle.pid, tmp_path)
        finally:
            await client.aclose()
    finally:
        await backend.stop()


def turn(user: str) -> Turn:
    return Turn(turn=0, user=user, deadline_ms=int(DEADLINE_S * 1000), clock=CLOCK)


async def test_a_halting_run_cuts_the_turn_as_soon_as_it_sees_the_stray(
    arm: Running, listener: tuple[int, list[str]]
) -> None:
    port, accepted = listener
    with pytest.raises(StrayConnection) as halted:
        wait = f"connect-and-wait 127.0.0.1 {port} 40"  # the arm keeps its turn open 40 s
        await arm.watch(halt=True).collect("a", arm.client, "s1", turn(wait), DEADLINE_S)
    # Seen at a watch tick, then the grace, and the turn cut: it never ended (no wall-clock
    # bound, which a loaded machine breaks: a watch that waited for the turn got its answer).
    assert halted.value.arm == "a" and halted.value.destination == f"127.0.0.1:{port}"
    assert halted.value.result is None  # the turn did not end within the grace: no answer
    assert accepted == []


async def test_a_turn_that_ends_within_the_grace_keeps_its_answer_when_the_run_halts(
    arm: Running, listener: tuple[int, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The grace made long enough that a loaded machine cannot push the turn's end past it; the
    # turn itself outlives the first watch tick, so the stray is seen while it still runs.
    # A grace no test sits out (the test's own timeout ends it first): so the halt came when
    # the turn ended, with no wall-clock bound a loaded machine could break.
    monkeypatch.setattr(turn_watch, "HALT_GRACE_S", 3600.0)
    port, accepted = listener
    wait = f"connect-and-wait 127.0.0.1 {port} {1.5 * WATCH_S}"
    with pytest.raises(StrayConnection) as halted:
        await arm.watch(halt=True).collect("a", arm.client, "s1", turn(wait), DEADLINE_S)
    # Halted when the turn ended, not at the grace's end: the answer was all but sent.
    result = halted.value.result
    assert result is not None and result.outcome == "done", result
    assert result.text.endswith("and waited")
    assert halted.value.destination == f"127.0.0.1:{port}"
    assert accepted == []


async def test_a_failing_run_lets_the_turn_finish_and_counts_the_stray_after(
    arm: Running, listener: tuple[int, list[str]]
) -> None:
    port, accepted = listener
    watch = arm.watch(halt=False)
    wait = f"connect-and-wait 127.0.0.1 {port} {2 * WATCH_S}"  # a watch tick sees it running
    result = await watch.collect("a", arm.client, "s1", turn(wait), DEADLINE_S)
    assert result.outcome == "done" and result.text.endswith("and waited"), result
    new = await watch.strays.new("a i1 turn 0")
    assert [e["destination"] for e in new] == [f"127.0.0.1:{port}"]
    assert accepted == []


async def test_a_failure_is_the_machinerys_when_the_seam_refuses_or_the_arm_is_gone(
    arm: Running,
) -> None:
    watch = arm.watch(halt=True)
    refused = httpx.ConnectError("connection refused")
    assert await watch.machinery_failed("a", refused) is True
    started = time.monotonic()
    # The arm still runs: an error it sent is its own, after the grace for a dying process.
    assert await watch.machinery_failed("a", SeamError("bad line")) is False
    assert time.monotonic() - started >= DEATH_GRACE_S
    os.kill(arm.pid, signal.SIGKILL)
    # Within the grace the backend sees the process gone: a broken stream is the machinery's.
    assert await watch.machinery_failed("a", SeamError("stream broke")) is True
    assert await watch.machinery_failed("a", None) is True
