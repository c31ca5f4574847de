"""A toy seam v2 arm for the memory benchmark tests: no model, its memory is files.

Ingesting a session appends `<session> <date> now=<its own clock's date>` to
`$ARM_STATE_DIR/<session id>.log` (the clock libfaketime pins, or the real one without it); with
MEMORY_ARM_LAG=1 also `lag=<seconds>`: its wall clock when the ingestion arrived less the
session's date (a timing, so off by default: two runs of one study keep identical stores). A
turn answers with that log, then `asked:` and the questions asked before on this store, and
appends its own question to `asked.log`: on a fresh copy per question, nothing was asked before.
With MEMORY_ARM_STATELESS=1 it declares no state folder and keeps the log in memory;
MEMORY_ARM_INGEST_S makes each ingestion take that long; ingesting the session named by
MEMORY_ARM_FIFO_SESSION leaves a fifo in the state folder, which no snapshot can copy; ingesting
the one named by MEMORY_ARM_BALLOON_SESSION takes memory until the arm's bound stops it; while
the file MEMORY_ARM_DIE_FILE names exists, every ingestion kills the arm's process (a crash the
harness retries on a fresh arm, in vain until the file is gone).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

from arms.arm import Arm, state_folder
from arms.seam import Ingest, OpenSession, Turn
from arms.server import main


class MemoryArm(Arm):
    name = "memory-toy"

    def __init__(self) -> None:
        stateless = os.environ.get("MEMORY_ARM_STATELESS") == "1"
        self.state_dir = None if stateless else state_folder()
        self.logs: dict[str, list[str]] = {}

    def _file(self, session_id: str) -> Path | None:
        return Path(self.state_dir) / f"{session_id}.log" if self.state_dir else None

    async def open_session(self, session: OpenSession) -> None:
        path = self._file(session.session_id)
        lines = path.read_text().splitlines() if path and path.exists() else []
        self.logs[session.session_id] = lines

    async def ingest(self, session_id: str, ingest: Ingest) -> int:
        date = ingest.date if ingest.date.tzinfo else ingest.date.replace(tzinfo=UTC)
        lag = time.time() - date.timestamp()
        await asyncio.sleep(float(os.environ.get("MEMORY_ARM_INGEST_S", "0")))
        die = os.environ.get("MEMORY_ARM_DIE_FILE")
        if die and Path(die).exists():
            os._exit(3)
        if ingest.session_id == os.environ.get("MEMORY_ARM_BALLOON_SESSION"):
            hog = []
            while True:  # every page written, so the memory is really taken
                hog.append(b"x" * (16 * 2**20))
        line = f"{ingest.session_id} {ingest.date:%Y-%m-%d} now={datetime.now():%Y-%m-%d}"
        if os.environ.get("MEMORY_ARM_LAG") == "1":
            line += f" lag={lag:.6f}"
        self.logs[session_id].append(line)
        path = self._file(session_id)
        if path is not None:
            with open(path, "a") as f:
                f.write(line + "\n")
            if ingest.session_id == os.environ.get("MEMORY_ARM_FIFO_SESSION"):
                os.mkfifo(path.with_suffix(".fifo"))
        return 1

    async def turn(self, session_id: str, turn: Turn) -> AsyncIterator[str]:
        asked_path = Path(self.state_dir) / "asked.log" if self.state_dir else None
        asked = asked_path.read_text().splitlines() if asked_path and asked_path.exists() else []
        yield "\n".join(self.logs[session_id]) + "\nasked: " + " | ".join(asked)
        if asked_path is not None:
            with open(asked_path, "a") as f:
                f.write(turn.user + "\n")


if __name__ == "__main__":
    main(MemoryArm)
