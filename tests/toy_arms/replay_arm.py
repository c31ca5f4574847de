"""A toy arm for replay tests, started by the harness as `python replay_arm.py`.

One streamed chat call per turn with the user's message only (no history), so changing one
request changes exactly one call. When the file named by REPLAY_ARM_SWITCH exists and reads
`ITEM TURN TEXT`, that item's turn adds TEXT to its system prompt: the test edits the arm's
behaviour between a recording and its replay without touching the study file, whose hash the
replay checks.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

from arms.arm import Arm
from arms.chat import Chat, ChatConfig
from arms.seam import OpenSession, Turn
from arms.server import main

SYSTEM = "You are a terse assistant."


class ReplayToyArm(Arm):
    name = "replay-toy"

    def __init__(self) -> None:
        self.chat = Chat(ChatConfig.from_env())
        self.items: dict[str, str] = {}

    async def open_session(self, session: OpenSession) -> None:
        self.items[session.session_id] = session.item_id

    async def turn(self, session_id: str, turn: Turn) -> AsyncIterator[str]:
        system = SYSTEM
        switch = Path(os.environ.get("REPLAY_ARM_SWITCH", "/nonexistent"))
        if switch.is_file():
            item, number, extra = switch.read_text().strip().split(" ", 2)
            if item == self.items[session_id] and int(number) == turn.turn:
                system = f"{SYSTEM} {extra}"
        async for text in self.chat.stream(system, [{"role": "user", "content": turn.user}]):
            yield text

    async def close_session(self, session_id: str) -> None:
        self.items.pop(session_id, None)

    async def shutdown(self) -> None:
        await self.chat.aclose()


if __name__ == "__main__":
    main(ReplayToyArm)
