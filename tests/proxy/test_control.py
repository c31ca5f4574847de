"""The control channel: the orchestrator names each arm's turn in a `TurnMessage`; the addon
keeps the turn on each call's flow when it arrives, so the call's record carries it."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from pydantic import ValidationError

from harness.isolation.ports import free_port
from proxy.control import HarnessControl, TurnRef
from rundir.turn_message import TurnMessage
from tests.proxy.addon_kit import addon_context

CHAT = "/openai/v1/chat/completions"
BODY = {"model": "gpt-4.1", "messages": [{"role": "user", "content": "hi"}]}


async def test_a_call_is_charged_to_the_turn_running_when_it_arrived(tmp_path: Path) -> None:
    port = free_port()
    async with (
        addon_context(tmp_path, harness_control_port=port) as kit,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as control,
    ):
        said = await control.post("/turn", json={"arm": "default", "item": "i1", "turn": 2})
        assert said.json() == {"arm": "default", "item": "i1", "turn": 2}
        _, _, sent = await kit.call(CHAT, BODY)
        assert sent.metadata["harness"].turn == TurnRef("i1", 2)  # on the flow, not a side table
        assert (await control.get("/turn")).json() == {"default": {"item": "i1", "turn": 2}}
        await control.post("/turn", json={"arm": "default", "item": None, "turn": 2})
        await kit.call(CHAT, BODY)  # between turns: no turn
    assert [(c["item"], c["turn"]) for c in kit.calls()] == [("i1", 2), (None, None)]


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"arm": "a", "item": "i1"}, "names its turn"),
        ({"arm": "a", "item": "i1", "turn": 1, "extra": 1}, "extra: Extra inputs"),
        ({"item": "i1", "turn": 1}, "arm: Field required"),
        ({"arm": "a", "item": "i1", "turn": "two"}, "turn: Input should be a valid integer"),
    ],
)
async def test_a_bad_message_is_refused_and_changes_nothing(
    tmp_path: Path, body: dict[str, object], says: str
) -> None:
    port = free_port()
    async with (
        addon_context(tmp_path, harness_control_port=port),
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as control,
    ):
        refused = await control.post("/turn", json=body)
        assert refused.status_code == 400
        assert says in refused.json()["error"]
        assert (await control.get("/turn")).json() == {}


def test_two_control_addons_keep_their_own_turns() -> None:
    # The turn used to be a module-level global: two proxies in one process shared it.
    first, second = HarnessControl(), HarnessControl()
    first.turns.set("a", TurnRef("i1", 0))
    assert second.turns.current("a") is None
    assert first.turns.current("a") == TurnRef("i1", 0)
    first.turns.set("a", None)
    assert first.turns.current("a") is None


def test_the_message_model() -> None:
    assert TurnMessage.model_validate({"arm": "a", "item": None, "turn": 3}).item is None
    assert TurnMessage.model_validate({"schema": 1, "arm": "a", "item": "i", "turn": 0}).turn == 0
    with pytest.raises(ValidationError):
        TurnMessage.model_validate({"schema": 2, "arm": "a"})
