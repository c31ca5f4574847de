"""A toy arm for the clock-pinning tests, started by the harness from its study folder as
`python clock_arm.py` (a relative command: the local backend starts arms in the study folder).

It reads its wall clock when a session opens and keeps reading it (every millisecond, in a
thread) so that libfaketime's cache always holds the latest offset: the item after it must still
see its own date from its first clock call. Commands: `opened` (the clock read at open_session),
`clock` (time.time() and datetime.now()), `sleep` (time.sleep(0.05), which libfaketime without
sleepfix turns into EINVAL), `cwd` (the working directory and note.txt read from it), `env` (the
libfaketime settings the arm was given).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path

from arms.arm import Arm
from arms.seam import OpenSession, Turn
from arms.server import main


def _keep_reading() -> None:
    while True:
        time.time()
        time.sleep(0.001)


class ClockToyArm(Arm):
    name = "clock-toy"

    def __init__(self) -> None:
        self.opened: dict[str, float] = {}
        threading.Thread(target=_keep_reading, daemon=True).start()

    async def open_session(self, session: OpenSession) -> None:
        self.opened[session.session_id] = time.time()

    async def turn(self, session_id: str, turn: Turn) -> AsyncIterator[str]:
        if turn.user == "opened":
            yield json.dumps({"time": self.opened[session_id]})
        elif turn.user == "clock":
            yield json.dumps({"time": time.time(), "now": datetime.now().isoformat()})
        elif turn.user == "sleep":
            time.sleep(0.05)
            yield "slept"
        elif turn.user == "cwd":
            yield json.dumps({"cwd": os.getcwd(), "note": Path("note.txt").read_text()})
        elif turn.user == "env":
            names = ("FAKETIME", "LD_PRELOAD")
            yield json.dumps({k: v for k, v in os.environ.items() if k.startswith(names)})


if __name__ == "__main__":
    main(ClockToyArm)
