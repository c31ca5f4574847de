"""A toy arm for the bounds test, run in the harness-arm image as `python abuse_arm.py`.

A turn saying `abuse` runs the arm's ABUSE (its environment): `forkbomb` (a shell fork bomb in
the background, then the reply), `balloon` (this process allocates and touches memory until the
kernel kills it), `fill` (writes /tmp until the disk refuses, then says how much it wrote and
what the read-only root said); with no ABUSE it answers `calm`. `echo WORDS` answers WORDS.
"""

from __future__ import annotations

import asyncio
import errno
import os
import subprocess
from collections.abc import AsyncIterator

from arms.arm import Arm
from arms.seam import OpenSession, Turn
from arms.server import main

CHUNK = 16 * 1024 * 1024


def _fill() -> str:
    written = 0
    try:
        with open("/tmp/fill", "wb") as f:
            while True:
                f.write(b"x" * CHUNK)
                f.flush()
                written += CHUNK
    except OSError as e:
        stopped = errno.errorcode.get(e.errno or 0, str(e.errno))
    try:
        with open("/overlay-fill", "wb") as f:
            f.write(b"x")
        root = "written"
    except OSError as e:
        root = errno.errorcode.get(e.errno or 0, str(e.errno))
    return f"wrote {written // 2**20} MiB to /tmp, then {stopped}; the root: {root}"


class AbuseArm(Arm):
    name = "abuse-toy"

    async def open_session(self, session: OpenSession) -> None:
        pass

    async def turn(self, session_id: str, turn: Turn) -> AsyncIterator[str]:
        command, _, rest = turn.user.partition(" ")
        if command == "abuse":
            command, rest = os.environ.get("ABUSE", "echo"), "calm"
        if command == "forkbomb":
            subprocess.Popen(["sh", "-c", "b(){ b | b & }; b"], start_new_session=True)
            await asyncio.sleep(3)  # long enough to meet the bound
            yield "bombed"
        elif command == "balloon":
            kept = []
            while True:  # every page touched: the kernel must charge it
                kept.append(bytearray(b"x" * CHUNK))
                await asyncio.sleep(0)
        elif command == "fill":
            yield await asyncio.to_thread(_fill)
        else:
            yield rest


if __name__ == "__main__":
    main(AbuseArm)
