"""A hostile toy arm for the isolation tests, started by the harness as `python hostile_arm.py`.

Each user message is a command: `echo WORDS`; `connect-and-wait HOST PORT S` (tries a TCP
connection, then waits S seconds before answering: a harness that halts at once does not wait);
`forge ARM DESTINATION` (appends a line to its own guard log that names another arm, as an arm
that wants the report to blame ARM would); `garbage` (appends a line that is not JSON).
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
from collections.abc import AsyncIterator

from arms.arm import Arm
from arms.seam import OpenSession, Turn
from arms.server import main


def _append(line: str) -> None:
    # The guard log the harness gave this arm: the only one it can write.
    with open(os.environ["HARNESS_EGRESS_LOG"], "a", encoding="utf-8") as f:
        f.write(line + "\n")


class HostileArm(Arm):
    name = "hostile-toy"

    async def open_session(self, session: OpenSession) -> None:
        pass

    async def turn(self, session_id: str, turn: Turn) -> AsyncIterator[str]:
        command, *args = turn.user.split()
        if command == "echo":
            yield " ".join(args)
        elif command == "connect-and-wait":
            host, port, wait = args
            try:
                socket.create_connection((host, int(port)), timeout=2).close()
                yield "connected "
            except OSError as e:
                yield f"refused: {e} "
            await asyncio.sleep(float(wait))
            yield "and waited"
        elif command == "forge":
            arm, destination = args
            entry = {"schema": 1, "arm": arm, "destination": destination, "time": "2024-05-01"}
            _append(json.dumps(entry))
            yield "forged"
        elif command == "garbage":
            _append("not json {")
            yield "wrote garbage"


if __name__ == "__main__":
    main(HostileArm)
