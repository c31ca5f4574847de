"""arms.arm: an arm with a memory finds the folder the harness gave it (made if missing, none when
the harness gave none), and an arm that does not ingest says so instead of keeping nothing."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from arms.arm import STATE_DIR_ENV, Arm, state_folder
from arms.seam import Ingest, OpenSession, Turn


class Forgetful(Arm):
    name = "forgetful"

    async def open_session(self, session: OpenSession) -> None:
        return None

    async def turn(self, session_id: str, turn: Turn) -> AsyncIterator[str]:
        yield "hello"


def test_the_state_folder_is_made_when_given_and_none_otherwise(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(STATE_DIR_ENV, raising=False)
    assert state_folder() is None
    monkeypatch.setenv(STATE_DIR_ENV, "  ")
    assert state_folder() is None
    chosen = tmp_path / "logs" / "a" / "state"
    monkeypatch.setenv(STATE_DIR_ENV, str(chosen))
    assert state_folder() == str(chosen)
    assert chosen.is_dir()


def test_an_arm_that_does_not_ingest_refuses_by_name() -> None:
    arm = Forgetful()
    ingest = Ingest.model_validate(
        {"session_id": "h1", "date": "2024-05-01T10:00:00Z", "messages": [], "deadline_ms": 1000}
    )
    with pytest.raises(NotImplementedError, match="arm 'forgetful' does not ingest history"):
        asyncio.run(arm.ingest("s1", ingest))
    assert arm.state_dir is None
