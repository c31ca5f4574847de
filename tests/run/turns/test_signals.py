"""Ctrl-C during a run, with real signals sent to this process: the first asks the run to stop
after the turn in flight, the second cancels it, and the signals are given back afterwards."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Callable

import pytest

from harness.run.turns.signals import CtrlC


async def until(condition: Callable[[], object], seconds: float = 10.0) -> None:
    """Let the loop run its signal handlers until `condition()` holds (a loaded machine is slow)."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the signal was never handled"
        await asyncio.sleep(0.01)


async def test_the_first_ctrl_c_lets_the_run_finish_its_turn_and_says_so() -> None:
    told: list[bool] = []
    ctrl_c = CtrlC(on_stop=lambda: told.append(ctrl_c.stopping))

    async def run() -> str:
        with ctrl_c.handled():
            os.kill(os.getpid(), signal.SIGINT)
            await until(lambda: told)
            await asyncio.sleep(0.2)  # the turn in flight goes on
            return "settled"

    assert await asyncio.create_task(run()) == "settled"
    assert told == [True]  # told once, with `stopping` already set for the run to read


async def test_the_second_signal_cancels_the_run_at_once() -> None:
    ctrl_c = CtrlC(on_stop=lambda: None)
    reached: list[str] = []

    async def run() -> None:
        with ctrl_c.handled():
            os.kill(os.getpid(), signal.SIGTERM)
            await until(lambda: ctrl_c.stopping)
            os.kill(os.getpid(), signal.SIGINT)
            await asyncio.sleep(30)
            reached.append("after the sleep")

    with pytest.raises(asyncio.CancelledError):
        await asyncio.create_task(run())
    assert reached == []  # cancelled in its sleep: it never went on after it


async def test_the_signals_are_given_back_when_the_run_ends() -> None:
    async def run() -> None:
        with CtrlC(on_stop=lambda: None).handled():
            assert signal.getsignal(signal.SIGINT) is not signal.default_int_handler

    await asyncio.create_task(run())
    # Ctrl-C outside a run is Python's again (KeyboardInterrupt), SIGTERM the default.
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
