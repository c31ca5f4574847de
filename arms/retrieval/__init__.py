"""The `retrieval` reference arm: the simplest memory that is not a window.

Each finished turn (user + reply) is embedded through the proxy and stored per session. A new
turn embeds the user's message, takes the `top_k` stored turns closest by cosine, puts them in
the system prompt, and makes one streamed chat call with only the current message.
"""

from __future__ import annotations

import math
import os
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field

from arms.chat import Chat, ChatConfig, system_prompt
from arms.seam import OpenSession, Turn
from arms.server import Arm

DEFAULT_TOP_K = 3
DEFAULT_EMBED_MODEL = "text-embedding-3-small"


@dataclass(frozen=True)
class Memory:
    turn: int
    text: str
    vector: tuple[float, ...]


@dataclass
class Store:
    opened: OpenSession
    memories: list[Memory] = field(default_factory=list)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    norms = math.sqrt(math.fsum(x * x for x in a)) * math.sqrt(math.fsum(y * y for y in b))
    return math.fsum(x * y for x, y in zip(a, b, strict=True)) / norms if norms else 0.0


def top_k(query: Sequence[float], memories: list[Memory], k: int) -> list[Memory]:
    """The k closest memories, shown oldest first. Ties go to the earlier turn, so the
    choice (and so the request) is the same on every run."""
    ranked = sorted(memories, key=lambda m: (-cosine(query, m.vector), m.turn))
    return sorted(ranked[:k], key=lambda m: m.turn)


def recall_block(memories: list[Memory]) -> str:
    if not memories:
        return ""
    shown = "\n\n".join(f"[turn {m.turn}]\n{m.text}" for m in memories)
    return f"Earlier turns of this conversation that may be relevant:\n\n{shown}"


class RetrievalArm(Arm):
    name = "retrieval"

    def __init__(
        self, config: ChatConfig | None = None, k: int | None = None, embed_model: str = ""
    ) -> None:
        self.chat = Chat(config or ChatConfig.from_env())
        self.k = k or int(os.environ.get("ARM_TOP_K", DEFAULT_TOP_K))
        self.embed_model = embed_model or os.environ.get("ARM_EMBED_MODEL", DEFAULT_EMBED_MODEL)
        self.stores: dict[str, Store] = {}

    async def open_session(self, session: OpenSession) -> None:
        self.stores[session.session_id] = Store(session)

    async def turn(self, session_id: str, turn: Turn) -> AsyncIterator[str]:
        store = self.stores[session_id]
        message = turn.user_message()
        recalled: list[Memory] = []
        if store.memories:  # nothing to rank on the first turn: save the embedding call
            [query] = await self.chat.embed([message], self.embed_model)
            recalled = top_k(query, store.memories, self.k)
        system = system_prompt(turn.clock, store.opened.context, recall_block(recalled))
        parts: list[str] = []
        async for text in self.chat.stream(system, [{"role": "user", "content": message}]):
            parts.append(text)
            yield text
        # Only finished turns are stored: a cut turn's embedding call would land in the next
        # turn's time and be charged to it.
        text = f"User: {message}\nAssistant: {''.join(parts)}"
        [vector] = await self.chat.embed([text], self.embed_model)
        store.memories.append(Memory(turn.turn, text, tuple(vector)))

    async def close_session(self, session_id: str) -> None:
        self.stores.pop(session_id, None)

    async def shutdown(self) -> None:
        await self.chat.aclose()
