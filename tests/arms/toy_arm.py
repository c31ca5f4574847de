"""A toy arm for the seam tests; its user message says what to do.

`echo a b c` streams the words; `say TEXT` streams TEXT as it is, in two deltas; `slow` streams
one word, waits, streams another; `boom` streams a word then raises; `bad` yields a non-string;
`hang` streams a word then waits forever (and records its cancellation); `events` reports what
happened so far, as a test's window into the process. Ingestion (seam v2): a history whose first
message is `hang` waits forever (and records its cancellation), `boom` raises, `refuse` falls
back to the helper's default (501); any other is recorded as an event and counted.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from arms.arm import Arm
from arms.seam import Ingest, OpenSession, Turn
from arms.server import main

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
        elif command == "say":
            yield rest[: len(rest) // 2]
            yield rest[len(rest) // 2 :]
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

    async def ingest(self, session_id: str, ingest: Ingest) -> int:
        first = ingest.messages[0].content if ingest.messages else ""
        if first == "hang":
            try:
                await asyncio.sleep(3600)
            finally:
                self.events.append(f"ingest {ingest.session_id} stopped")
        if first == "boom":
            raise RuntimeError("ingest broke\nsecond line that must not leak")
        if first == "refuse":
            return await super().ingest(session_id, ingest)
        day = f"{ingest.date:%Y-%m-%d}"
        self.events.append(
            f"ingest {session_id} {ingest.session_id} {len(ingest.messages)} at {day}"
        )
        return len(ingest.messages)

    async def close_session(self, session_id: str) -> None:
        self.events.append(f"close {session_id}")


if __name__ == "__main__":
    main(ToyArm)
