"""stubs.openai.chat_wire: choices as plain entries and as interleaved stream chunks."""

from __future__ import annotations

import json
from typing import Any

from stubs.openai.chat_wire import ChatChoice, plain_choice, stream_events
from vendors.requests.openai_chat import ChatParams


def choice(index: int, tokens: list[str]) -> ChatChoice:
    return ChatChoice(index, "".join(tokens), [], "stop", tokens, None, len(tokens), 0)


def chunks(events: list[bytes]) -> list[dict[str, Any]]:
    assert events[-1] == b"data: [DONE]\n\n"
    return [json.loads(e.removeprefix(b"data: ")) for e in events[:-1]]


def test_a_plain_choice_is_an_assistant_message() -> None:
    entry = plain_choice(choice(0, ["Hi", " there"]), ChatParams(model="m"))
    assert entry["message"]["content"] == "Hi there" and entry["finish_reason"] == "stop"
    assert "tool_calls" not in entry["message"] and entry["logprobs"] is None


def test_two_choices_interleave_and_each_rebuilds_its_text() -> None:
    params = ChatParams(model="m", n=2, stream=True)
    words = [["a", "b", "c", "d"], ["x", "y"]]
    parsed = chunks(stream_events("id1", params, [choice(i, w) for i, w in enumerate(words)], {}))
    assert [c["choices"][0]["index"] for c in parsed[:4]] == [0, 1, 0, 1]
    for i, w in enumerate(words):
        mine = [c["choices"][0] for c in parsed if c["choices"][0]["index"] == i]
        assert "".join(e["delta"].get("content", "") for e in mine) == "".join(w)
        assert mine[-1]["finish_reason"] == "stop"
    assert all("usage" not in c for c in parsed)


def test_usage_comes_last_when_asked_and_is_null_before() -> None:
    params = ChatParams(model="m", stream=True, include_usage=True)
    parsed = chunks(stream_events("id1", params, [choice(0, ["a"])], {"total_tokens": 3}))
    assert parsed[-1]["choices"] == [] and parsed[-1]["usage"] == {"total_tokens": 3}
    assert all(c["usage"] is None for c in parsed[:-1])


def test_a_tool_call_streams_its_arguments_in_pieces() -> None:
    arguments = json.dumps({"city": "Lisbon", "unit": "celsius", "days": 3})
    call = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": arguments}}
    tool = ChatChoice(0, None, [call], "tool_calls", [], None, 9, 0)
    parsed = chunks(stream_events("id1", ChatParams(model="m", stream=True), [tool], {}))
    deltas = [c["choices"][0]["delta"] for c in parsed]
    assert deltas[0]["tool_calls"][0]["function"] == {"name": "f", "arguments": ""}
    pieces = [d["tool_calls"][0]["function"]["arguments"] for d in deltas[1:-1]]
    assert len(pieces) > 1 and "".join(pieces) == arguments
    assert parsed[-1]["choices"][0]["finish_reason"] == "tool_calls"
