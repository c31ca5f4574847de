"""The `bare` reference arm: the floor every other arm is read against.

One streamed chat call per turn, the last `WINDOW` messages of the conversation, no tools, no
memory beyond that window. A memory benchmark's history (seam v2 ingestion) is taken and kept
nowhere: bare answers its questions from the question alone.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from arms.arm import Arm
from arms.chat import Chat, ChatConfig, system_prompt, with_turn_context
from arms.seam import Ingest, OpenSession, Turn

WINDOW = 60


@dataclass
class Conversation:
    opened: OpenSession
    messages: list[dict[str, str]] = field(default_factory=list)


class BareArm(Arm):
    name = "bare"

    def __init__(self, config: ChatConfig | None = None, window: int | None = None) -> None:
        self.chat = Chat(config or ChatConfig.from_env())
        self.window = window or int(os.environ.get("ARM_WINDOW", WINDOW))
        self.conversations: dict[str, Conversation] = {}

    async def open_session(self, session: OpenSession) -> None:
        self.conversations[session.session_id] = Conversation(session)

    async def turn(self, session_id: str, turn: Turn) -> AsyncIterator[str]:
        conversation = self.conversations[session_id]
        conversation.messages.append({"role": "user", "content": turn.user_message()})
        # Only the window is sent, but the whole history is kept: it costs little and keeps the
        # window's edge exact however many turns the item has.
        window = conversation.messages[-self.window :]
        system = with_turn_context(
            system_prompt(turn.clock, conversation.opened.context), turn.system_addon()
        )
        parts: list[str] = []
        try:
            async for text in self.chat.stream(system, window):
                parts.append(text)
                yield text
        finally:
            # A cut turn still happened: the next turn sees the part the user was shown, as a
            # person would. Nothing shown, nothing kept (Anthropic refuses empty text blocks;
            # both APIs accept two user messages in a row).
            if parts:
                conversation.messages.append({"role": "assistant", "content": "".join(parts)})

    async def ingest(self, session_id: str, ingest: Ingest) -> int:
        return 0  # the floor keeps nothing: no memory, no state folder

    async def close_session(self, session_id: str) -> None:
        self.conversations.pop(session_id, None)

    async def shutdown(self) -> None:
        await self.chat.aclose()
