"""stubs.openai.responses_stream: the typed events that carry a finished response."""

from __future__ import annotations

import json
from typing import Any

from stubs.openai.responses_stream import stream_events

PENDING = {"id": "resp_1", "status": "in_progress", "output": []}


def events(final: dict[str, Any], tokens: list[str]) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for raw in stream_events(PENDING, final, tokens, []):
        head, data = raw.decode().strip().split("\n")
        out.append((head.removeprefix("event: "), json.loads(data.removeprefix("data: "))))
    return out


def message(text: str) -> dict[str, Any]:
    part = {"type": "output_text", "annotations": [], "logprobs": [], "text": text}
    return {"id": "msg_1", "type": "message", "status": "completed", "content": [part]}


def test_a_message_streams_from_created_to_completed_in_order() -> None:
    final = {"id": "resp_1", "status": "completed", "output": [message("one two three four")]}
    got = events(final, ["one", " two", " three", " four"])
    kinds = [k for k, _ in got]
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert kinds[-1] == "response.completed" and got[-1][1]["response"] == final
    assert got[0][1]["response"] == PENDING
    assert [d["sequence_number"] for _, d in got] == list(range(len(got)))
    deltas = [d["delta"] for k, d in got if k == "response.output_text.delta"]
    assert len(deltas) == 2 and "".join(deltas) == "one two three four"


def test_a_function_call_streams_its_arguments_and_a_cut_reply_ends_incomplete() -> None:
    arguments = json.dumps({"query": "where does Ana live", "limit": 5})
    call = {"id": "fc_1", "type": "function_call", "name": "f", "arguments": arguments}
    final = {"id": "resp_1", "status": "incomplete", "output": [call]}
    got = events(final, [])
    pieces = [d["delta"] for k, d in got if k == "response.function_call_arguments.delta"]
    assert len(pieces) > 1 and "".join(pieces) == arguments
    assert got[-1][0] == "response.incomplete"
