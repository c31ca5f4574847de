"""proxy.flow.sse_block: a run of plain events is taken whole only when each event is exactly what
the event-by-event path would read, and its values are what that path would parse."""

from __future__ import annotations

import json
import random
from typing import Any

import msgspec
import pytest

from proxy.flow.sse_block import DONE, PlainBlock, plain_block
from proxy.redact import events
from vendors.chat_chunk import ChatChunk, decode_chat_chunk

CHUNK = {
    "id": "chatcmpl-1",
    "object": "chat.completion.chunk",
    "created": 1735689600,
    "model": "gpt-4.1-mini",
    "choices": [{"index": 0, "delta": {"content": "a few words"}, "logprobs": None}],
}


def _event(data: Any) -> bytes:
    return b"data: " + json.dumps(data, separators=(",", ":")).encode() + b"\n\n"


def _taken(chunk: bytes) -> PlainBlock:
    found = plain_block(chunk)
    assert found is not None
    return found[0]


def test_a_run_of_chat_chunks_and_done_is_one_block_and_the_partial_event_is_left() -> None:
    usage = {"id": "c", "choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 4}}
    run = _event(CHUNK) * 3 + _event(usage) + b"data: [DONE]\n\n"
    found = plain_block(run + b'data: {"id":')
    assert found is not None
    block, rest = found
    assert block.raw == run and rest == b'data: {"id":'
    assert [type(v) for v in block.values] == [ChatChunk] * 3 + [dict, type(DONE)]
    assert block.values[3] == usage and block.values[4] is DONE
    assert block.parts == [p for p in run.split(b"\n\n") if p]


def test_a_run_of_named_events_is_one_block() -> None:
    start = {"type": "message_start", "message": {"model": "claude", "usage": {"input_tokens": 3}}}
    delta = {"type": "content_block_delta", "index": 0}
    delta["delta"] = {"type": "text_delta", "text": "hi"}  # type: ignore[assignment]
    run = b"".join(
        b"event: " + data["type"].encode() + b"\n" + _event(data)  # type: ignore[attr-defined]
        for data in (start, delta, delta, {"type": "message_stop"})
    )
    found = plain_block(run + b"event: ping\ndata: {")
    assert found is not None
    block, rest = found
    assert block.raw == run and rest == b"event: ping\ndata: {"
    assert block.values == [start, delta, delta, {"type": "message_stop"}]


@pytest.mark.parametrize(
    "chunk",
    [
        b'data: {"a":1}\r\n\r\n',  # CR line ends: the line decoder's case
        b'event: x\ndata: {"a":1}\n\ndata: {"b":2}\n\n',  # the two forms mixed
        b'data: {"a":1}\n\nevent: x\ndata: {"b":2}\n\n',
        b'event: x\ndata:{"a":1}\n\n',  # no space after the colon
        b'event: x\nid: 1\ndata: {"a":1}\n\n',  # an id line
        b"event: a\n\nevent: b\ndata: {}\ndata: {}\n\n",  # LFs that add up, not per event
        b"event: a\n\n",  # a name and no data
        b': keep-alive\n\ndata: {"a":1}\n\n',  # a comment
        b'data:{"a":1}\n\n',  # no space after the colon
        b'data: {"a":1}\ndata: {"b":2}\n\n',  # two data lines in one event
        b'data: {"a":1}\n\n\n\ndata: {"b":2}\n\n',  # an empty event between
        b'data: {"a":1}\n\ndata:  {"b":2}\n\n',  # data that starts with a space
        b"data: [1, 2]\n\n",  # JSON, but not an object
        b"data: [DONE] \n\n",  # not exactly [DONE]
        b'data: {"a":"\\ud800"}\n\n',  # a lone surrogate: json.loads reads it, msgspec not
        b'data: {"a":NaN}\n\n',
        b'data: {"a":1e400}\n\n',
        b'data: {"a":"\xff"}\n\n',  # not UTF-8: the decoder replaces it
        b'data: {"a":1} x\n\n',  # trailing data
        b'data: {"a":1}{"b":2}\n\n',
        b'data: {"a":1',  # no whole event yet
        b"",
    ],
)
def test_anything_the_event_path_decides_differently_is_left_to_it(chunk: bytes) -> None:
    assert plain_block(chunk) is None


@pytest.mark.parametrize(
    "change",
    [
        lambda c: c["choices"][0]["delta"].update(tool_calls=[{"index": 0, "id": "t"}]),
        lambda c: c["choices"][0]["delta"].update(reasoning_content="hm"),
        lambda c: c["choices"][0]["delta"].update(tool_calls=[]),
        lambda c: c["choices"][0]["delta"].update(audio={"id": "a"}),
        lambda c: c["choices"][0].update(index=True),  # a bool is not an index
        lambda c: c["choices"][0].pop("index"),  # named by position then
        lambda c: c["choices"][0].update(logprobs={"content": [{"token": "a"}]}),
        lambda c: c.update(usage={"prompt_tokens": 1}),
        lambda c: c.update(error={"message": "x"}),
        lambda c: c.update(created=1.5),
        lambda c: c.update(newer_field="x"),
        lambda c: c.update(choices={"index": 0}),
    ],
)
def test_a_chunk_with_anything_more_is_read_as_a_dict(change: Any) -> None:
    chunk = json.loads(json.dumps(CHUNK))
    change(chunk)
    (value,) = _taken(_event(chunk)).values
    assert type(value) is dict and value == chunk


def _without_nulls(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _without_nulls(v) for k, v in data.items() if v is not None}
    if isinstance(data, list):
        return [_without_nulls(v) for v in data]
    return data


def _random_chunk(rnd: random.Random) -> dict[str, Any]:
    chunk: dict[str, Any] = {"choices": []}
    for key in rnd.sample(["id", "object", "created", "model", "service_tier"], rnd.randint(0, 5)):
        chunk[key] = 7 if key == "created" else rnd.choice(["", "x", "gpt-4.1", None])
    for position in range(rnd.randint(0, 3)):
        delta = {k: rnd.choice(["", "sk-", 'é\n"', None]) for k in ("content", "refusal", "role")}
        for key in rnd.sample(list(delta), rnd.randint(0, 2)):
            delta.pop(key)
        for key in rnd.sample(["tool_calls", "function_call", "audio", "reasoning_content"], 1):
            delta[key] = None  # the nulls some servers send on every chunk
        choice = {"index": rnd.choice([position, 5 - position]), "delta": delta}
        choice.update(rnd.choice([{}, {"finish_reason": None}, {"finish_reason": "stop"}]))
        chunk["choices"].append(choice)
    return chunk


@pytest.mark.parametrize("seed", range(200))
def test_a_chunk_read_as_a_struct_gives_the_dicts_texts(seed: int) -> None:
    chunk = _random_chunk(random.Random(seed))
    raw = json.dumps(chunk).encode()
    struct = decode_chat_chunk(raw)
    # The key guard's channels, paths and texts, and the fields the meter reads, as from the dict.
    assert events._texts(struct) == events._texts(json.loads(raw))
    assert (struct.model, struct.service_tier) == (chunk.get("model"), chunk.get("service_tier"))


@pytest.mark.parametrize("seed", range(300))
def test_what_a_block_decodes_is_what_json_loads_reads(seed: int) -> None:
    rnd = random.Random(seed)
    other = b'data: {"a":[1,2.5e3,"\\u00e9",{"b":null}],"choices":{}}\n\n'
    whole = [_event(CHUNK), _event(_random_chunk(rnd)), b"data: [DONE]\n\n", other]
    broken = [b"data: ", b"\n\n", b"\n", b"x", b"\\", b'"', b'{"a":']
    chunk = b"".join(
        rnd.choice(whole if rnd.random() < 0.9 else broken) for _ in range(rnd.randint(1, 8))
    )
    found = plain_block(chunk)
    if found is None:
        return
    block, rest = found
    assert block.raw + rest == chunk
    for part, value in zip(block.parts, block.values, strict=True):
        assert part.startswith(b"data: ")
        text = part[6:].decode()
        if value is DONE:
            assert text == "[DONE]"
        elif type(value) is ChatChunk:
            as_dict = json.loads(text)
            assert events._texts(value) == events._texts(as_dict)
            # A field the chunk left out reads as null in the struct: the same to every reader.
            assert _without_nulls(msgspec.to_builtins(value)) == _without_nulls(as_dict)
        else:
            assert value == json.loads(text)
