"""Ctrl-C (SIGINT, or SIGTERM) during a run: the first lets the turn in flight settle and then
stops the run; the second stops it at once, by cancelling the task that runs it."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import structlog

# The orchestrator's logger: a run's log lines keep the one name they had before the split.
log = structlog.get_logger("harness.run.orchestrator")

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class CtrlC:
    def __init__(self, on_stop: Callable[[], None]) -> None:
        self.on_stop = on_stop  # told at the first signal, before the run sees `stopping`
        self.stopping = False
        self._main: asyncio.Task[object] | None = None

    @contextmanager
    def handled(self) -> Iterator[None]:
        """Inside the running task: the signals are this object's until the block ends."""
        loop = asyncio.get_running_loop()
        self._main = asyncio.current_task()
        for sig in SIGNALS:
            loop.add_signal_handler(sig, self._interrupt)
        try:
            yield
        finally:
            for sig in SIGNALS:
                loop.remove_signal_handler(sig)

    def _interrupt(self) -> None:
        if self.stopping and self._main is not None:
            log.warning("stopping now")
            self._main.cancel()
            return
        self.stopping = True
        self.on_stop()
        log.warning("stopping after the turn in flight (Ctrl-C again to stop at once)")
