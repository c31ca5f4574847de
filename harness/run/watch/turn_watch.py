"""Watching a running turn: the arm still alive, and no stray connection meanwhile.

A container killed mid-turn leaves the seam connection open with nobody behind it (a vanished
network interface sends no reset), so the turn's stream alone would end only at its deadline:
every WATCH_S the watch asks the backend whether the arm still runs, and (with `on_stray =
"halt"`) looks for refused connections. A stray gives the turn in flight HALT_GRACE_S to end by
itself, so an answer that was all but sent is kept; then it is cut.

After a turn fails, `machinery_failed` tells the machinery's failures (the arm's process died,
its seam refused the connection: retried on a fresh arm) from the arm's own.
"""

from __future__ import annotations

import asyncio
import contextlib
import time

import httpx

from arms.client import SeamClient, TurnResult
from arms.seam import Turn
from harness.isolation import InfraError, IsolationBackend
from harness.run.watch.stray_watch import StrayConnection, StrayWatch, strongest

WATCH_S = 1.0  # how often a running turn checks that its arm is still alive (and for strays)
HALT_GRACE_S = 0.5
# A stream that breaks as the arm's process dies can be seen before the process is reaped.
DEATH_GRACE_S = 1.0


class TurnWatch:
    def __init__(self, backend: IsolationBackend, strays: StrayWatch) -> None:
        self.backend = backend
        self.strays = strays

    async def collect(
        self, arm: str, client: SeamClient, session_id: str, turn: Turn, deadline_s: float
    ) -> TurnResult:
        """The turn's result. Raises InfraError if the arm dies mid-turn, StrayConnection
        (carrying the result if the turn ended within the grace) if a stray halts the run."""
        task = asyncio.create_task(client.collect(session_id, turn, deadline_s))
        try:
            while True:
                done, _ = await asyncio.wait({task}, timeout=WATCH_S)
                if done:
                    return task.result()
                if not await asyncio.to_thread(self.backend.arm_alive, arm):
                    raise InfraError(f"turn {turn.turn}: the arm died mid-turn")
                if self.strays.halt:
                    new = await self.strays.new(f"{arm} turn {turn.turn}")
                    if new:
                        done, _ = await asyncio.wait({task}, timeout=HALT_GRACE_S)
                        ended = done and not task.cancelled() and task.exception() is None
                        result = task.result() if ended else None
                        raise StrayConnection(strongest(new), result)
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task

    async def machinery_failed(self, arm: str, error: Exception | None) -> bool:
        """Whether a failure is the machinery's: the process is gone or the seam refused."""
        if isinstance(error, httpx.ConnectError):
            return True
        deadline = time.monotonic() + DEATH_GRACE_S
        while time.monotonic() < deadline:
            # In a thread, as in `collect`: the docker backend asks the engine (a subprocess).
            if not await asyncio.to_thread(self.backend.arm_alive, arm):
                return True
            await asyncio.sleep(0.05)
        return False
