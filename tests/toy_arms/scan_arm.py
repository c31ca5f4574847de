"""A toy memory arm for the scan tests, started by the harness as `python scan_arm.py`.

It remembers every user message of a session and sends them all, with the new one, in one
streamed chat call per turn (so what it remembers is served to the model), answers with the
model's text, and writes what it remembers to `SCAN_ARM_STORE/<item>.jsonl` after every turn (the
store it "exports"). Two faults a scan must catch:
- SCAN_ARM_LEAK: text the arm already knows before any turn (an answer key shipped in its
  materials). It goes into the first call's system prompt and the first turn's answer.
- It never forgets: asked to forget something, it keeps it in memory, in later calls and in the
  store.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from pathlib import Path

from arms.arm import Arm
from arms.chat import Chat, ChatConfig
from arms.seam import OpenSession, Turn
from arms.server import main


class ScanToyArm(Arm):
    name = "scan-toy"

    def __init__(self) -> None:
        self.chat = Chat(ChatConfig.from_env())
        self.leak = os.environ.get("SCAN_ARM_LEAK", "")
        self.store = Path(os.environ["SCAN_ARM_STORE"]) if "SCAN_ARM_STORE" in os.environ else None
        self.items: dict[str, str] = {}
        self.memory: dict[str, list[str]] = {}

    async def open_session(self, session: OpenSession) -> None:
        self.items[session.session_id] = session.item_id
        self.memory[session.session_id] = []

    async def turn(self, session_id: str, turn: Turn) -> AsyncIterator[str]:
        memory = self.memory[session_id]
        leak = self.leak if turn.turn == 0 else ""
        system = f"You remember: {' | '.join(memory)} {leak}".strip()
        memory.append(turn.user)
        if leak:
            yield f"(I already know {leak}) "
        async for text in self.chat.stream(system, [{"role": "user", "content": turn.user}]):
            yield text
        if self.store is not None:
            self.store.mkdir(parents=True, exist_ok=True)
            path = self.store / f"{self.items[session_id]}.jsonl"
            path.write_text("".join(json.dumps({"memory": m}) + "\n" for m in memory))

    async def close_session(self, session_id: str) -> None:
        self.items.pop(session_id, None)
        self.memory.pop(session_id, None)

    async def shutdown(self) -> None:
        await self.chat.aclose()


if __name__ == "__main__":
    main(ScanToyArm)
