"""The `retrieval` reference arm: the simplest memory that is not a window.

Each finished turn (user + reply) is embedded through the proxy (`combined`: each message alone,
their vectors summed) and stored per session. A new
turn embeds the user's message, takes the `top_k` stored turns closest by cosine, puts them in
the system prompt, and makes one streamed chat call with only the current message.

A memory benchmark's history (seam v2 ingestion) is stored the same way: each exchange of a
history session (a user message and the reply after it), dated, is one memory, embedded in one
call per session. A memory's vector is the sum of its messages' (unit) vectors, each message
embedded alone: embedded as one text, a long reply outweighed the short message that holds the
fact ("My locker code is 8927." against a 130-word reply): in record runs of 30 questions of
bench/t1_bench.py's LongMemEval-S-sized file (~275 exchanges a history, the stub's static
vectors, top 3) the evidence reached the answer for 18 of 27 questions, against 27 of 27 this
way (BENCHMARKS.md).
With $ARM_STATE_DIR each ingestion's new memories are appended there
(`<session>.jsonl`, one memory a line) and read back when a session of that id opens, so the
harness can snapshot the folder and start the arm afresh on a copy for each question. Appended,
not rewritten: the whole store written as JSON after every session cost ~85 MB of JSON per
LongMemEval-S item, growing with the square of its sessions (issue 37).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from arms.arm import Arm, state_folder
from arms.chat import Chat, ChatConfig, system_prompt, with_turn_context
from arms.engine import safe_name
from arms.recall import recall_section
from arms.seam import Ingest, OpenSession, Turn

DEFAULT_TOP_K = 3
DEFAULT_EMBED_MODEL = "text-embedding-3-small"


@dataclass(frozen=True)
class Memory:
    turn: int | None  # the answer turn it came from; None: an ingested history exchange
    text: str
    vector: tuple[float, ...]
    order: int  # when it was stored: ranks ties and orders what is shown


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
    ranked = sorted(memories, key=lambda m: (-cosine(query, m.vector), m.order))
    return sorted(ranked[:k], key=lambda m: m.order)


RECALL_TITLE = "Earlier turns of this conversation that may be relevant"


def recall_block(memories: list[Memory], k: int) -> str:
    """The recalled memories for the system text, countable in the request (arms/recall.py)."""
    # An ingested exchange carries its own heading (date and session).
    shown = [m.text if m.turn is None else f"[turn {m.turn}]\n{m.text}" for m in memories]
    return recall_section(RECALL_TITLE, shown, k)


def exchanges(ingest: Ingest) -> list[list[str]]:
    """A history session as memories: each user message with the replies up to the next one,
    each message a line `Who: text` (embedded alone: `combined`)."""
    parts: list[list[str]] = []
    for message in ingest.messages:
        who = message.speaker or message.role.capitalize()
        if message.role == "user" or not parts:
            parts.append([])
        parts[-1].append(f"{who}: {message.content}")
    return parts


def shown(ingest: Ingest, lines: list[str]) -> str:
    """An ingested exchange as the prompt shows it: headed by its session's date (a question
    may ask when something was said) and id."""
    return f"({ingest.date:%Y-%m-%d %H:%M}, session {ingest.session_id})\n" + "\n".join(lines)


def combined(vectors: Sequence[Sequence[float]]) -> tuple[float, ...]:
    """One memory's vector from its messages' unit vectors: their sum (cosine reads only its
    direction, their mean's), so each message counts the same whatever its length. Added in
    the messages' order: the same floats on every run."""
    return tuple(sum(column) for column in zip(*vectors, strict=True))


def append_store(path: Path, memories: list[Memory]) -> None:
    """Add memories to a store file, one JSON line each, written whole with one write: a line
    cut by a crash is the last, and `read_store` drops it."""
    rows = (
        json.dumps({"turn": m.turn, "text": m.text, "vector": m.vector, "order": m.order})
        for m in memories
    )
    with path.open("a", encoding="utf-8") as out:
        out.write("".join(row + "\n" for row in rows))


def read_store(path: Path) -> list[Memory]:
    """A store file's memories in the order they were stored; none if there is no file. A
    last line without its newline (a write cut short) is not a memory."""
    if not path.is_file():
        return []
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")[:-1]  # the piece after the last newline is empty or cut
    memories = []
    for line in lines:
        entry = json.loads(line)
        memories.append(
            Memory(entry["turn"], entry["text"], tuple(entry["vector"]), entry["order"])
        )
    return memories


class RetrievalArm(Arm):
    name = "retrieval"

    def __init__(
        self, config: ChatConfig | None = None, k: int | None = None, embed_model: str = ""
    ) -> None:
        self.chat = Chat(config or ChatConfig.from_env())
        self.k = k or int(os.environ.get("ARM_TOP_K", DEFAULT_TOP_K))
        self.embed_model = embed_model or os.environ.get("ARM_EMBED_MODEL", DEFAULT_EMBED_MODEL)
        self.stores: dict[str, Store] = {}
        self.state_dir = state_folder()

    def _embed_model(self, store: Store) -> str:
        """The study's `[parity] embed_model`, else the arm's own."""
        parity = store.opened.parity
        return (parity.embed_model if parity is not None else None) or self.embed_model

    def _saved(self, session_id: str) -> Path | None:
        if self.state_dir is None:
            return None
        return Path(self.state_dir) / f"{safe_name(session_id)}.jsonl"

    async def open_session(self, session: OpenSession) -> None:
        store = Store(session)
        saved = self._saved(session.session_id)
        if saved is not None:
            store.memories = read_store(saved)
        self.stores[session.session_id] = store

    async def _embed_each(self, groups: list[list[str]], model: str) -> list[tuple[float, ...]]:
        """Each group's vector (`combined`), every message embedded in one call."""
        vectors = await self.chat.embed([line for group in groups for line in group], model)
        out, at = [], 0
        for group in groups:
            out.append(combined(vectors[at : at + len(group)]))
            at += len(group)
        return out

    async def ingest(self, session_id: str, ingest: Ingest) -> int:
        store = self.stores[session_id]
        groups = exchanges(ingest)
        if not groups:
            return 0
        vectors = await self._embed_each(groups, self._embed_model(store))
        start = len(store.memories)
        for n, (lines, vector) in enumerate(zip(groups, vectors, strict=True)):
            store.memories.append(Memory(None, shown(ingest, lines), vector, start + n))
        saved = self._saved(session_id)
        if saved is not None:
            append_store(saved, store.memories[start:])
        return len(groups)

    async def turn(self, session_id: str, turn: Turn) -> AsyncIterator[str]:
        store = self.stores[session_id]
        message = turn.user_message()
        recalled: list[Memory] = []
        parity = store.opened.parity  # the study's engine parity, over the seam
        k = parity.top_k if parity is not None and parity.top_k else self.k
        embed_model = self._embed_model(store)
        if store.memories:  # nothing to rank on the first turn: save the embedding call
            [query] = await self.chat.embed([message], embed_model)
            recalled = top_k(query, store.memories, k)
        prompt = parity.answer_prompt if parity is not None else None
        recalled_text = recall_block(recalled, k)
        system = system_prompt(turn.clock, store.opened.context, recalled_text, prompt)
        system = with_turn_context(system, turn.system_addon())  # another arm's turn context
        parts: list[str] = []
        user = [{"role": "user", "content": message}]
        async for text in self.chat.stream(system, user, parity=parity):
            parts.append(text)
            yield text
        # Only finished turns are stored: a cut turn's embedding call would land in the next
        # turn's time and be charged to it.
        lines = [f"User: {message}", f"Assistant: {''.join(parts)}"]
        [vector] = await self._embed_each([lines], embed_model)
        store.memories.append(Memory(turn.turn, "\n".join(lines), vector, len(store.memories)))

    async def close_session(self, session_id: str) -> None:
        self.stores.pop(session_id, None)

    async def shutdown(self) -> None:
        await self.chat.aclose()
