"""A toy arm for the seam tests; its user message says what to do.

`echo a b c` streams the words; `slow` streams one word, waits, streams another; `boom` streams a
word then raises; `bad` yields a non-string; `hang` streams a word then waits forever (and
records its cancellation); `events` reports what happened so far, as a test's window into the
process.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from arms.seam import OpenSession, Turn
from arms.server import Arm, main

SLOW_GAP_S = 1.5


class ToyArm(Arm):
    name = "toy"

    def __init__(self) -> None:
        self.events: list[str] = []

    async def open_session(self, session: OpenSession) -> None:
        if session.context == "fail":
            raise ValueError("cannot open this one\nsecond line that must not leak")
        self.events.append(f"open {session.session_id}")

    async def turn(self, session_id: str, turn: Turn) -> AsyncIterator[str]:
        command, _, rest = turn.user.partition(" ")
        if command == "echo":
            for word in rest.split():
                yield word + " "
        elif command == "slow":
            yield "first "
            await asyncio.sleep(SLOW_GAP_S)
            yield "second"
        elif command == "boom":
            yield "partial "
            raise RuntimeError("kaboom\nTraceback (most recent call last): secret")
        elif command == "bad":
            yield 42  # type: ignore[misc]
        elif command == "hang":
            yield "partial "
            try:
                await asyncio.sleep(3600)
            finally:
                self.events.append(f"hang {turn.turn} ended")
        elif command == "events":
            yield "\n".join(self.events)

    async def close_session(self, session_id: str) -> None:
        self.events.append(f"close {session_id}")


if __name__ == "__main__":
    main(ToyArm)
