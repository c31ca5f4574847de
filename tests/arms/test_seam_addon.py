"""A turn context through the seam (docs/coupled.md): an arm returns it with its final `done`
line (`TurnAddon`), the client reads it into the turn's result, and a turn context handed to an
arm (`addon_from` set) is a system prompt of the turn, never part of the user's message. Served
for real: the helper in its own process, the orchestrator's client."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from datetime import datetime

import httpx
import pytest

from arms.client import SeamClient
from arms.seam import Done, OpenSession, Turn, stream_line
from tests.arms.arm_process import ArmProcess

CLOCK = datetime(2024, 5, 1, 10, 0)


@pytest.fixture(scope="module")
def arm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ArmProcess]:
    process = ArmProcess("tests.arms.addon_arm", tmp_path_factory.mktemp("addon"))
    yield process
    process.stop()


@pytest.fixture
async def client(arm: ArmProcess) -> AsyncIterator[SeamClient]:
    async with SeamClient(arm.url) as seam:
        await seam.open_session(OpenSession(session_id="s", item_id="i", clock=CLOCK))
        yield seam
        await seam.close_session("s")


def turn(user: str, addon: str = "", addon_from: str | None = None) -> Turn:
    return Turn(
        turn=2, user=user, addon=addon, addon_from=addon_from, deadline_ms=10_000, clock=CLOCK
    )


async def test_the_turn_context_comes_back_with_done(client: SeamClient) -> None:
    result = await client.collect("s", turn("hello"), 10)
    assert result.outcome == "done" and result.addon == "context of turn 2"
    assert "context of turn" not in result.text  # not streamed as a delta


async def test_a_turn_without_one_returns_none(client: SeamClient) -> None:
    result = await client.collect("s", turn("none"), 10)
    assert result.outcome == "done" and result.addon is None


async def test_two_turn_contexts_are_the_arms_error(client: SeamClient) -> None:
    result = await client.collect("s", turn("twice"), 10)
    assert result.outcome == "error" and "second TurnAddon" in (result.error or "")


async def test_a_handed_turn_context_is_a_system_prompt_not_the_users(client: SeamClient) -> None:
    handed = await client.collect("s", turn("hi", "B's context", "B"), 10)
    assert handed.text == "user='hi' system=\"B's context\""
    scripted = await client.collect("s", turn("hi", "Answer briefly."), 10)
    assert scripted.text == "user='hi\\n\\nAnswer briefly.' system=''"


def test_addon_from_is_sent_only_when_set(arm: ArmProcess) -> None:
    """An arm that refuses unknown fields (the Node helper) sees other studies' turns as before."""
    assert "addon_from" not in turn("x").model_dump_json(exclude_none=True)
    with httpx.Client(base_url=arm.url, trust_env=False) as http:
        http.post(
            "/sessions", json={"session_id": "raw", "item_id": "i", "clock": CLOCK.isoformat()}
        )
        body = json.loads(turn("none").model_dump_json(exclude_none=True))
        with http.stream("POST", "/sessions/raw/turns", json=body) as response:
            last = json.loads(list(response.iter_lines())[-1])
    assert last == {"type": "done", "text": "user='none' system=''"}  # no addon key at all


def test_a_done_line_without_addon_is_unchanged() -> None:
    assert stream_line(Done(text="x")) == b'{"type":"done","text":"x"}\n'
