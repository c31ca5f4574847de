"""The `mem0` engine arm: mem0 (mem0ai 2.x) as the arm's memory, stores on local disk.

mem0 runs in-process with a local qdrant (a folder under the arm's store, no server) and its
history in SQLite beside it; its LLM and embedder are the OpenAI ones, which find the proxy by
OPENAI_BASE_URL like every SDK here. Each seam session is one mem0 user (`user_id` = session
id), so items never see each other's memories.

Telemetry is off unless the study turns it on: mem0 reads MEM0_TELEMETRY when it is imported
(mem0/memory/telemetry.py: "True" by default, then a posthog client to us.i.posthog.com), so
the default is set before the import. MEM0_DIR keeps mem0's own files (its user id, the
telemetry's migration store) in the arm's store too, not in $HOME.

mem0 is synchronous; its calls run in a worker thread so the seam keeps streaming.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from arms.chat import ChatConfig
from arms.engine import UTILITY_HEADERS, EngineArm
from arms.seam import Ingest, OpenSession, Turn

DEFAULT_LLM = "gpt-4.1-mini"
DEFAULT_EMBEDDER = "text-embedding-3-small"
EMBEDDING_DIMS = 1536  # text-embedding-3-small's size; qdrant's collection is made with it


class Mem0Arm(EngineArm):
    name = "mem0"

    def __init__(self, config: ChatConfig | None = None) -> None:
        super().__init__(config)
        os.environ.setdefault("MEM0_TELEMETRY", "false")
        os.environ.setdefault("MEM0_DIR", str(self.store / "mem0-home"))
        from mem0 import Memory  # after the environment above: mem0 reads it on import

        self.memory = Memory.from_config(
            {
                "vector_store": {
                    "provider": "qdrant",
                    "config": {
                        "path": str(self.store / "qdrant"),
                        "collection_name": "arm",
                        "embedding_model_dims": EMBEDDING_DIMS,
                        "on_disk": True,
                    },
                },
                "llm": {
                    "provider": "openai",
                    "config": {
                        "model": os.environ.get("ARM_ENGINE_MODEL", DEFAULT_LLM),
                        "max_tokens": int(os.environ.get("ARM_ENGINE_MAX_TOKENS", "1024")),
                    },
                },
                "embedder": {
                    "provider": "openai",
                    "config": {"model": self.embed_model},
                },
                "history_db_path": str(self.store / "history.db"),
            }
        )
        # mem0 builds its own OpenAI client and takes no headers; `with_options` is the SDK's
        # way to copy a client with extra default headers.
        self.memory.llm.client = self.memory.llm.client.with_options(
            default_headers=UTILITY_HEADERS
        )

    @staticmethod
    def _scope(session: OpenSession) -> dict[str, str]:
        return {"user_id": session.session_id}

    async def recall(self, session: OpenSession, query: str) -> list[str]:
        found = await asyncio.to_thread(
            self.memory.search, query, top_k=self.k_for(session), filters=self._scope(session)
        )
        return [hit["memory"] for hit in found.get("results", [])]

    async def remember(self, session: OpenSession, turn: Turn, message: str) -> None:
        await asyncio.to_thread(
            self.memory.add,
            [{"role": "user", "content": message}],
            user_id=session.session_id,
            metadata={"item": session.item_id, "turn": turn.turn},
        )

    async def remember_session(self, session: OpenSession, ingest: Ingest) -> int:
        # The whole session in one add, as mem0's own LongMemEval/LoCoMo scripts do: mem0
        # extracts facts from the conversation, with today's date (the pinned clock: the
        # session's) in its prompt.
        messages = [
            {"role": m.role, "content": f"{m.speaker}: {m.content}" if m.speaker else m.content}
            for m in ingest.messages
        ]
        if not messages:
            return 0
        added = await asyncio.to_thread(
            self.memory.add,
            messages,
            user_id=session.session_id,
            metadata={"item": session.item_id, "session": ingest.session_id},
        )
        return len(added.get("results", [])) if isinstance(added, dict) else 0

    async def dump(self, session: OpenSession) -> dict[str, Any]:
        listed = await asyncio.to_thread(
            self.memory.get_all, filters=self._scope(session), top_k=1000
        )
        memories = [
            {"memory": hit["memory"], "metadata": hit.get("metadata") or {}}
            for hit in listed.get("results", [])
        ]
        return {"engine": "mem0", "memories": memories}

    async def shutdown(self) -> None:
        await super().shutdown()
        await asyncio.to_thread(self.memory.close)
