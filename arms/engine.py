"""What the memory-engine arms (arms/mem0, arms/graphiti) share: one turn's shape and the export.

A turn recalls what the engine holds for this conversation, puts it in the system prompt, makes
one streamed main call with the current message only (so whatever the arm remembers reached the
model through the engine, which the study's memory controls check), then stores the user's
message in the engine. Only finished turns are stored: a cut turn's engine calls would land in
the next turn's time and be charged to it.

Each arm keeps its stores in a folder of its own (ARM_STATE_DIR when the harness gives one, seam
v2, which the arm then declares as its `state_dir`; else ARM_STORE_DIR, else a fresh temporary
folder: a container's file system is its own, and a local arm must not share a store with a
second copy of itself). A memory benchmark's history session is taken in by `remember_session`
(seam v2 ingestion), at the session's date. With ARM_EXPORT_DIR set, each session's store is
written there as JSON when the session closes (`<session id>.json`), so a test or a person can
see what the engine stored, not only what the model was told. In a container, `/harness/logs/...`
is the arm's own log folder on the host (`RUN_DIR/logs/<arm>/`).

The engines' own model calls carry `X-Harness-Purpose: utility`, so the proxy tells them from
the arm's main call (memory controls read main calls only).
"""

from __future__ import annotations

import json
import logging
import os
import re
import tempfile
from abc import abstractmethod
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from arms.arm import Arm, state_folder
from arms.chat import PURPOSE_HEADER, Chat, ChatConfig, system_prompt, with_turn_context
from arms.recall import recall_section
from arms.seam import Ingest, OpenSession, Turn

log = logging.getLogger("arms.engine")

UTILITY_HEADERS = {PURPOSE_HEADER: "utility"}
DEFAULT_TOP_K = 5
DEFAULT_EMBED_MODEL = "text-embedding-3-small"


def store_dir(arm: str) -> Path:
    chosen = state_folder() or os.environ.get("ARM_STORE_DIR", "").strip()
    folder = Path(chosen) if chosen else Path(tempfile.mkdtemp(prefix=f"harness-{arm}-"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def safe_name(session_id: str) -> str:
    """A session id as a file or graph name: seam ids allow `.` and `:`, engines may not."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", session_id)


class EngineArm(Arm):
    """A memory engine behind the seam: subclasses say how to recall, store and export."""

    recall_title = "What you remember about this user from earlier in the conversation"

    def __init__(self, config: ChatConfig | None = None) -> None:
        self.chat = Chat(config or ChatConfig.from_env())
        self.top_k = int(os.environ.get("ARM_TOP_K", DEFAULT_TOP_K))
        # The embedder the engine is built with (mem0's and graphiti's, at start-up).
        self.embed_model = os.environ.get("ARM_EMBED_MODEL", DEFAULT_EMBED_MODEL)
        self.store = store_dir(self.name)
        # Every store lives in the harness's folder: it may snapshot and copy it (seam v2).
        self.state_dir = str(self.store) if state_folder() else None
        export = os.environ.get("ARM_EXPORT_DIR", "").strip()
        self.export_dir = Path(export) if export else None
        self.sessions: dict[str, OpenSession] = {}

    @abstractmethod
    async def recall(self, session: OpenSession, query: str) -> list[str]:
        """The engine's memories relevant to `query`, most relevant first."""

    @abstractmethod
    async def remember(self, session: OpenSession, turn: Turn, message: str) -> None:
        """Store the user's message of a finished turn."""

    async def remember_session(self, session: OpenSession, ingest: Ingest) -> int:
        """Take in one history session at its date (seam v2); how many memories it kept."""
        raise NotImplementedError(f"arm {self.name!r} does not ingest history")

    async def ingest(self, session_id: str, ingest: Ingest) -> int:
        return await self.remember_session(self.sessions[session_id], ingest)

    @abstractmethod
    async def dump(self, session: OpenSession) -> dict[str, Any]:
        """Everything the engine holds for the session, as JSON-ready data."""

    def k_for(self, session: OpenSession) -> int:
        """Memories recalled per turn: the study's `[parity] top_k`, else the arm's own."""
        parity = session.parity
        return parity.top_k if parity is not None and parity.top_k else self.top_k

    async def open_session(self, session: OpenSession) -> None:
        parity = session.parity
        if parity is not None and parity.embed_model and parity.embed_model != self.embed_model:
            # The engine's embedder is built at start-up: a session cannot change it.
            raise ValueError(
                f"[parity] embed_model {parity.embed_model!r}, but {self.name} embeds with "
                f"{self.embed_model!r} (ARM_EMBED_MODEL)"
            )
        self.sessions[session.session_id] = session

    async def turn(self, session_id: str, turn: Turn) -> AsyncIterator[str]:
        session = self.sessions[session_id]
        # The engine sees the user's words only: the study's addon is an instruction for the
        # answer ("Answer in one sentence."), not something the user said to remember.
        recalled = await self.recall(session, turn.user)
        parity = session.parity
        prompt = parity.answer_prompt if parity is not None else None
        # Countable in the request (arms/recall.py): the audit checks [parity] top_k there.
        shown = recall_section(self.recall_title, recalled, self.k_for(session))
        system = system_prompt(turn.clock, session.context, shown, prompt)
        system = with_turn_context(system, turn.system_addon())  # another arm's turn context
        message = {"role": "user", "content": turn.user_message()}
        async for text in self.chat.stream(system, [message], parity=parity):
            yield text
        await self.remember(session, turn, turn.user)

    async def close_session(self, session_id: str) -> None:
        session = self.sessions.pop(session_id, None)
        if session is not None:
            await self.export(session)
            await self.forget(session)

    async def forget(self, session: OpenSession) -> None:
        """Release the session's engine state after its export. Default: nothing."""

    async def export(self, session: OpenSession) -> None:
        if self.export_dir is None:
            return
        data = {"arm": self.name, "session_id": session.session_id, "item_id": session.item_id}
        try:
            data |= await self.dump(session)
        except Exception as exc:
            # The export is evidence, not the arm's work: a failure is written down, not raised.
            log.exception("exporting session %s failed", session.session_id)
            data["export_error"] = f"{type(exc).__name__}: {exc}"
        self.export_dir.mkdir(parents=True, exist_ok=True)
        target = self.export_dir / f"{safe_name(session.session_id)}.json"
        tmp = target.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")
        os.replace(tmp, target)

    async def shutdown(self) -> None:
        for session in list(self.sessions.values()):
            await self.export(session)
        await self.chat.aclose()
