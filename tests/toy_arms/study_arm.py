"""A toy arm for orchestrator tests, started by the harness as `python study_arm.py`.

Each user message is a command: `echo WORDS`; `sleep S` (one word, then S seconds, then more);
`gap` (seconds between this turn's arrival and the previous one's, by the real monotonic clock);
`clock` (the arm's time.time() and datetime.now()); `die-once FILE` (the process kills itself
unless FILE exists, which it creates first: the retry then succeeds); `connect HOST PORT` (tries
a TCP connection and says what happened); `fail WORDS` (raises: the turn's outcome is `error`).
With TOY_FAIL_ALL set, every turn raises (an arm that never completes a turn).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import time
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path

from arms.arm import Arm
from arms.seam import OpenSession, Turn
from arms.server import main


class StudyToyArm(Arm):
    name = "study-toy"

    def __init__(self) -> None:
        self.arrivals: list[float] = []

    async def open_session(self, session: OpenSession) -> None:
        pass

    async def turn(self, session_id: str, turn: Turn) -> AsyncIterator[str]:
        self.arrivals.append(time.monotonic())
        command, _, rest = turn.user.partition(" ")
        if os.environ.get("TOY_FAIL_ALL"):
            raise RuntimeError(f"{os.environ['TOY_FAIL_ALL']} on {turn.user!r}")
        if command == "fail":
            raise RuntimeError(rest)
        if command == "echo":
            yield rest
        elif command == "sleep":
            yield "partial "
            await asyncio.sleep(float(rest))
            yield "late"
        elif command == "gap":
            yield f"{self.arrivals[-1] - self.arrivals[-2]:.3f}"
        elif command == "clock":
            yield json.dumps({"time": time.time(), "now": datetime.now().isoformat()})
        elif command == "die-once":
            marker = Path(rest)
            if not marker.exists():
                marker.write_text("died once")
                yield "about to die "
                await asyncio.sleep(0.1)
                os.kill(os.getpid(), signal.SIGKILL)
            yield "survived"
        elif command == "connect":
            host, port = rest.split()
            try:
                socket.create_connection((host, int(port)), timeout=2).close()
                yield "connected"
            except OSError as e:
                yield f"refused: {e}"


if __name__ == "__main__":
    main(StudyToyArm)
