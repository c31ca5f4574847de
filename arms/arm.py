"""What a Python arm implements: one `Arm` subclass (its sessions, its turns and, for a memory
benchmark, its ingestion), served over the seam by arms/server.py; and what a turn may yield
besides text (`TurnAddon`) and where an arm with a memory keeps it (`state_folder`)."""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import ClassVar

from arms.seam import Ingest, OpenSession, Turn

# The folder the harness gives an arm for its memory (seam v2): snapshotted after a history is
# ingested, copied afresh for each question.
STATE_DIR_ENV = "ARM_STATE_DIR"


@dataclass(frozen=True)
class TurnAddon:
    """Yield one from `Arm.turn` to return the turn context this turn used (a coupled study's
    source arm): it is not streamed; it goes with the final `done` line as its `addon`."""

    text: str


def state_folder() -> str | None:
    """$ARM_STATE_DIR, made if missing, or None when the harness gave none."""
    chosen = os.environ.get(STATE_DIR_ENV, "").strip()
    if not chosen:
        return None
    os.makedirs(chosen, exist_ok=True)
    return chosen


class Arm(ABC):
    """One arm. Subclasses set `name` and implement `open_session` and `turn`; an arm with a
    memory implements `ingest` (seam v2) and, when all of it lives in one folder, sets
    `state_dir` to that folder (see `state_folder`)."""

    name: ClassVar[str]
    state_dir: str | None = None

    @abstractmethod
    async def open_session(self, session: OpenSession) -> None:
        """Prepare state for a new conversation. The helper has checked the id is new."""

    @abstractmethod
    def turn(self, session_id: str, turn: Turn) -> AsyncIterator[str | TurnAddon]:
        """Yield the reply as text deltas (write it as `async def ... yield`), and at most one
        `TurnAddon` (a coupled study's source arm: the turn context it used).

        If the orchestrator cuts the turn at its deadline the generator is cancelled at its
        current `await`; put bookkeeping that must happen anyway in a `finally`.
        """

    async def close_session(self, session_id: str) -> None:  # noqa: B027 - optional hook
        """Drop the session's state. Default: nothing to drop."""

    async def ingest(self, session_id: str, ingest: Ingest) -> int:
        """Take one history session into the session's memory (seam v2); return how many
        memories were kept. Default: refused (501), so a memory benchmark never runs an arm
        that silently keeps nothing; an arm that keeps nothing on purpose returns 0."""
        raise NotImplementedError(f"arm {self.name!r} does not ingest history (seam v2)")

    async def shutdown(self) -> None:  # noqa: B027 - optional hook
        """Release clients and connections when the server stops. Default: nothing."""
