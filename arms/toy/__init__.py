"""The toy arms of the coupled example (examples/coupled): one class, four roles (ARM_ROLE).

- `B`, the reference: its system text per turn is a static base, the turn's context and a
  retrieved-memory section; it returns the turn's context (without the other two) with its final
  seam message (`TurnAddon`), which the harness hands to the arms after it in the turn.
- `C0`, the candidate: the static base, and the turn context it is handed placed as a system
  prompt of the turn (never in the user message).
- `C1`, C0 plus an element: when the user's message holds ARM_TRIGGER, the arm fires, and its
  next turn's system prompt gets ARM_ELEMENT's text added at its end (the cross-arm gate checks
  that this is all that differs from C0's request).
- `Z`, a control: as C0, on an Anthropic subject through Anthropic's OpenAI-compatible route
  (openai SDK, `$ANTHROPIC_BASE_URL/v1`), or the Messages API (anthropic SDK) when the day's
  probe says so (HARNESS_PROBE_ROUTE, set by the harness from probe.json; arms/chat.py).

One streamed main call per turn over the official SDK (arms/chat.py), the conversation's
messages as the user and the arm saw them. A memory benchmark's history (seam v2 ingestion) is
taken and kept nowhere, as `bare` does: the toy roles answer from the question alone, so a coupled
memory study (examples/coupled-memory) can lead with the toy reference B.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace

from arms.arm import Arm, TurnAddon
from arms.chat import Chat, ChatConfig, probe_route, system_prompt
from arms.seam import Ingest, OpenSession, Turn

ROLES = ("B", "C0", "C1", "Z")


@dataclass
class Conversation:
    opened: OpenSession
    messages: list[dict[str, str]] = field(default_factory=list)
    fired: bool = False  # C1: the last turn's message held the trigger


def turn_context(turn: Turn) -> str:
    """B's context for a turn: what it adds to its system text for this turn alone."""
    words = 12 + 4 * turn.turn
    return f"For turn {turn.turn}: answer in at most {words} words, and end with a question."


class ToyArm(Arm):
    name = "toy"

    def __init__(self, config: ChatConfig | None = None) -> None:
        self.role = os.environ.get("ARM_ROLE", "")
        if self.role not in ROLES:
            raise ValueError(f"ARM_ROLE={self.role!r}: use one of {', '.join(ROLES)}")
        self.trigger = os.environ.get("ARM_TRIGGER", "").casefold()
        self.element = os.environ.get("ARM_ELEMENT", "")
        config = config or ChatConfig.from_env()
        if self.role == "Z" and config.vendor == "anthropic":
            config = replace(config, anthropic_route=probe_route(default="compat"))
        self.chat = Chat(config)
        self.conversations: dict[str, Conversation] = {}

    async def open_session(self, session: OpenSession) -> None:
        self.conversations[session.session_id] = Conversation(session)

    def _system(self, conversation: Conversation, turn: Turn) -> str:
        base = system_prompt(turn.clock, conversation.opened.context)
        if self.role == "B":
            memories = "Retrieved memories:\n- (none for this conversation)"
            return f"{base}\n\n{turn_context(turn)}\n\n{memories}"
        system = f"{base}\n\n{turn.system_addon()}" if turn.system_addon() else base
        if self.role == "C1":
            if conversation.fired:
                system += self.element
            conversation.fired = bool(self.trigger) and self.trigger in turn.user.casefold()
        return system

    async def turn(self, session_id: str, turn: Turn) -> AsyncIterator[str | TurnAddon]:
        conversation = self.conversations[session_id]
        system = self._system(conversation, turn)
        conversation.messages.append({"role": "user", "content": turn.user_message()})
        parts: list[str] = []
        try:
            async for text in self.chat.stream(system, conversation.messages):
                parts.append(text)
                yield text
        finally:
            if parts:
                conversation.messages.append({"role": "assistant", "content": "".join(parts)})
        if self.role == "B":
            yield TurnAddon(turn_context(turn))

    async def ingest(self, session_id: str, ingest: Ingest) -> int:
        return 0  # no memory, no state folder: the reference's is its product's own

    async def close_session(self, session_id: str) -> None:
        self.conversations.pop(session_id, None)

    async def shutdown(self) -> None:
        await self.chat.aclose()
