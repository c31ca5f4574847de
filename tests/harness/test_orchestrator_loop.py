"""The orchestrator's event loop keeps running while an arm's clock is pinned, in process on a
real local backend (real proxy, real toy arm, libfaketime): pinning waits out libfaketime's
cache until the next real second (harness/isolation/clock.py), and a loop held that long stalls
everything else on it (the proxy's control client, the turn watch, Ctrl-C)."""

from __future__ import annotations

import asyncio
import math
import time
from pathlib import Path

import pytest

from harness.isolation.base import ProxySettings
from harness.isolation.clock import SETTLE_MARGIN_S
from harness.isolation.local import LocalBackend
from harness.run.orchestrator import Orchestrator
from harness.run.start import running
from harness.study import load_study
from rundir.turns import TurnLog
from tests.harness.studies import TOY_ARM, read_jsonl
from tests.study_builder import StudyBuilder

pytestmark = pytest.mark.integration

ITEMS = 12  # a pin early in a real second holds the loop longest; some of 12 are (see below)
TICK_S = 0.02
LONG_WAIT_S = 0.7  # pins that must wait this long for the next second are the telling ones
# How late the loop may first see a pin's write: scheduling on a loaded machine, far below a
# held loop's LONG_WAIT_S.
LATE_S = 0.4


async def test_the_loop_runs_on_while_a_clock_is_pinned(tmp_path: Path) -> None:
    items = [
        {"id": f"i{n}", "clock": f"2024-05-{n + 1:02d}T10:00:00", "turns": [{"user": "echo x"}]}
        for n in range(ITEMS)
    ]
    folder = tmp_path / "study"
    study = load_study(StudyBuilder(items=items).arm("a", f"python {TOY_ARM}").write(folder))
    run_dir = tmp_path / "run"
    backend = LocalBackend(run_dir, work_dir=folder)
    if backend.clock_pinning != "libfaketime":
        pytest.skip("libfaketime is not installed (apt-get install libfaketime): nothing waits")
    clock_file = run_dir / "clocks" / "a"
    pins: list[tuple[float, float]] = []  # (when the file was written, when the loop saw it)

    async def heartbeat() -> None:
        seen = 0.0
        while True:
            written = clock_file.stat().st_mtime if clock_file.exists() else 0.0
            if written != seen:
                seen = written
                pins.append((written, time.time()))
            await asyncio.sleep(TICK_S)

    settings = ProxySettings(run_dir=run_dir, run_id="r1", mode="record", arms=["a"])
    turns = TurnLog(run_dir / "turns.jsonl")
    beating = asyncio.create_task(heartbeat())
    try:
        async with running(backend, settings) as proxy:
            orchestrator = Orchestrator(study, ["a"], study.items, backend, "r1", turns)
            tally = await orchestrator.run(proxy)
    finally:
        beating.cancel()
        turns.close()
    assert tally.outcomes == {"done": ITEMS}
    assert [t["text"] for t in read_jsonl(run_dir / "turns.jsonl")] == ["x"] * ITEMS
    # The arm's start-up writes "+0" (no wait); every item's pin after it is one more write.
    waits = [
        (math.floor(written) + 1 + SETTLE_MARGIN_S - written, seen - written)
        for written, seen in pins[1:]
    ]
    assert len(waits) == ITEMS, pins
    telling = [late for wait, late in waits if wait >= LONG_WAIT_S]
    if not telling:  # chance 0.3 ** 12: every pin happened late in its second
        pytest.skip(f"no pin waited {LONG_WAIT_S} s or more: {waits}")
    assert max(telling) < LATE_S, f"the loop stood still while a clock was pinned: {waits}"
