"""The control channel: the orchestrator names each arm's turn in a `TurnMessage`; the addon
keeps the turn on each call's flow when it arrives, so the call's record carries it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from harness.isolation.ports import free_port
from proxy.flow.control import MAX_BODY, HarnessControl, TurnRef
from rundir.control.turn_message import TurnMessage
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


def test_the_guard_holds_an_arms_turn_until_it_ends() -> None:
    # The study's output guard checking an arm's turn (harness/guard.py): the arm's listener is
    # the guard's meanwhile; ending it leaves the arm's own turn as it was.
    board = HarnessControl().turns
    board.set("a", TurnRef("i2", 0))
    board.set_guard("a", TurnRef("i1", 1, "guard"))
    assert board.current("a") == TurnRef("i1", 1, "guard")
    board.set_guard("a", None)
    assert board.current("a") == TurnRef("i2", 0)


def test_the_message_model() -> None:
    assert TurnMessage.model_validate({"arm": "a", "item": None, "turn": 3}).item is None
    assert TurnMessage.model_validate({"schema": 1, "arm": "a", "item": "i", "turn": 0}).turn == 0
    with pytest.raises(ValidationError):
        TurnMessage.model_validate({"schema": 2, "arm": "a"})


PACED = 'schema = 1\n[[delays]]\npurpose = "paced"\nchunk_ms = 80\n'
STORY = {
    "model": "gpt-4.1",
    "stream": True,
    "messages": [{"role": "user", "content": "Tell me a long story about a lighthouse keeper"}],
}


async def test_a_streamed_call_keeps_its_turn_while_new_turns_land(tmp_path: Path) -> None:
    """Two calls in flight (paced streams), each sent under another turn, and the board moved on
    twice before either ends: each is charged to the turn current when its request arrived."""
    stubs = tmp_path / "stubs.toml"
    stubs.write_text(PACED)
    port = free_port()
    async with (
        addon_context(tmp_path / "run", harness_control_port=port, harness_stubs=str(stubs)) as kit,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as control,
    ):

        async def start(turn: int) -> tuple[Any, asyncio.Task[Any]]:
            said = await control.post("/turn", json={"arm": "default", "item": "i1", "turn": turn})
            assert said.status_code == 200
            flow = kit.flow(CHAT, STORY, headers={"x-harness-purpose": "paced"})
            sent = asyncio.create_task(kit.send(flow))
            while flow.request.path == CHAT:  # until the reply is handed to the stream server
                await asyncio.sleep(0.005)
            return flow, sent

        first, first_sent = await start(0)
        second, second_sent = await start(1)
        await control.post("/turn", json={"arm": "default", "item": None, "turn": None})
        # Both streams are still playing (80 ms a chunk) when the board has moved on.
        assert not first_sent.done() and not second_sent.done()
        await asyncio.gather(first_sent, second_sent)
        _, _, after = await kit.call(CHAT, BODY)
    assert first.response is not None and first.response.status_code == 200
    assert "data: [DONE]" in first.response.get_text()
    assert first.metadata["harness"].turn == TurnRef("i1", 0)
    assert second.metadata["harness"].turn == TurnRef("i1", 1)
    assert after.metadata["harness"].turn is None
    by_seq = sorted(kit.calls(), key=lambda c: c["seq"])
    assert [(c["item"], c["turn"], c["stream"]) for c in by_seq] == [
        ("i1", 0, True),
        ("i1", 1, True),
        (None, None, False),
    ]


HOSTILE = {
    "turn true": b'{"arm": "a", "item": "i9", "turn": true}',
    "turn as text": b'{"arm": "a", "item": "i9", "turn": "3"}',
    "turn a float": b'{"arm": "a", "item": "i9", "turn": 3.0}',
    "negative turn": b'{"arm": "a", "item": "i9", "turn": -1}',
    "item a number": b'{"arm": "a", "item": 9, "turn": 3}',
    "arm a list": b'{"arm": ["a"], "item": "i9", "turn": 3}',
    "empty arm": b'{"arm": "", "item": "i9", "turn": 3}',
    "arm twice": b'{"arm": "x", "item": "i9", "turn": 3, "arm": "a"}',
    "a huge turn": b'{"arm": "a", "item": "i9", "turn": ' + b"9" * 400 + b"}",
    "schema 2": b'{"schema": 2, "arm": "a", "item": "i9", "turn": 3}',
    "extra keys": b'{"arm": "a", "item": "i9", "turn": 3, "cost": 0, "seq": 1}',
    "not an object": b'[{"arm": "a", "item": "i9", "turn": 3}]',
    "deeply nested": b'{"arm": "a", "item": "i9", "turn": 3, "x": '
    + b"[" * 5000
    + b"]" * 5000
    + b"}",
    "not JSON": b"arm=a&item=i9&turn=3",
    "not UTF-8": b'{"arm": "\xff", "item": "i9", "turn": 3}',
    "empty": b"",
}


@pytest.mark.parametrize("case", list(HOSTILE))
async def test_a_hostile_message_gets_a_400_and_leaves_the_board(tmp_path: Path, case: str) -> None:
    port = free_port()
    async with (
        addon_context(tmp_path, harness_control_port=port),
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as control,
    ):
        await control.post("/turn", json={"arm": "a", "item": "i1", "turn": 2})
        refused = await control.post(
            "/turn", content=HOSTILE[case], headers={"content-type": "application/json"}
        )
        assert refused.status_code == 400, refused.text
        assert refused.json()["error"]
        assert (await control.get("/turn")).json() == {"a": {"item": "i1", "turn": 2}}


async def test_a_huge_or_unframed_message_is_refused_and_the_endpoint_serves_on(
    tmp_path: Path,
) -> None:
    """A body past MAX_BODY gets a 413 (not a dropped connection), a content-length that is no
    number a 400, and neither touches the board or stops the endpoint."""
    port = free_port()
    async with (
        addon_context(tmp_path, harness_control_port=port),
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as control,
    ):
        await control.post("/turn", json={"arm": "a", "item": "i1", "turn": 2})
        huge = {"arm": "a", "item": "i" * (MAX_BODY + 1), "turn": 3}
        too_big = await control.post("/turn", json=huge)
        assert too_big.status_code == 413, too_big.text
        assert too_big.headers["connection"] == "close"
        assert str(MAX_BODY) in too_big.json()["error"]
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"POST /turn HTTP/1.1\r\ncontent-length: lots\r\n\r\n{}")
        writer.write_eof()
        unframed = await reader.read()  # answered, then closed: the framing cannot be trusted
        writer.close()
        assert unframed.startswith(b"HTTP/1.1 400 ")
        assert (await control.get("/turn")).json() == {"a": {"item": "i1", "turn": 2}}


async def test_an_ingestions_calls_say_so_and_default_to_the_ingest_purpose(
    tmp_path: Path,
) -> None:
    """Seam v2: while an arm ingests a history session, a call that names no purpose is
    `ingest`, one that names its purpose keeps it, and both are logged with phase `ingest`;
    an answer's calls are logged as before, with no phase key."""
    port = free_port()
    async with (
        addon_context(tmp_path, harness_control_port=port) as kit,
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as control,
    ):
        message = {"arm": "default", "item": "q1", "turn": 3, "phase": "ingest"}
        assert (await control.post("/turn", json=message)).status_code == 200
        assert (await control.get("/turn")).json()["default"]["phase"] == "ingest"
        await kit.call(CHAT, BODY)
        await kit.call(CHAT, BODY, headers={"x-harness-purpose": "utility"})
        await control.post("/turn", json={"arm": "default", "item": "q1", "turn": 0})
        await kit.call(CHAT, BODY)
        bad = {"arm": "default", "item": "q1", "turn": 0, "phase": "lunch"}
        assert (await control.post("/turn", json=bad)).status_code == 400
    calls = kit.calls()
    assert [(c["turn"], c["purpose"], c.get("phase")) for c in calls] == [
        (3, "ingest", "ingest"),
        (3, "utility", "ingest"),
        (0, "main", None),
    ]
    assert "phase" not in calls[2]
