"""The stream tap takes a chunk's events at once when nothing in them can be a key
(`EventTextGuard._quiet`, and a run of plain events as one block: proxy/flow/sse_block.py) and
frames common events without the line decoder (`EventFramer._plain_events`); all must leave the
relayed bytes, the parsed events and the key guard exactly as the event-by-event path does,
however the stream is cut into chunks."""

from __future__ import annotations

import json
import random

import pytest

from proxy.flow.sse_events import EventFramer, RawEvent
from proxy.redact.events import EventTextGuard
from proxy.redact.secrets import SecretRedactor

OPENAI_KEY = "sk-proj-study-SECRET-fedcba9876543210"
ANTHROPIC_KEY = "sk-ant-study-SECRET-0123456789abcdef"
REDACTOR = SecretRedactor({"OPENAI_API_KEY": OPENAI_KEY, "ANTHROPIC_API_KEY": ANTHROPIC_KEY})
PIECES = [
    "hello ",
    "s",
    "sk",
    "sk-",
    "sk-p",
    OPENAI_KEY[:10],
    OPENAI_KEY[10:20],
    OPENAI_KEY[20:],
    OPENAI_KEY,
    ANTHROPIC_KEY[:8],
    ANTHROPIC_KEY[8:],
    " ",
    "é",
    "\\u0073",
    "%73",
    "x\n",
]


def _stream(rnd: random.Random, only: str = "") -> list[bytes]:
    """Random events of every kind, or only those of OpenAI's chat (`only="chat"`: chunks, the
    usage chunk, [DONE]) or of Anthropic (`only="anthropic"`: deltas and pings): the plain
    events a block takes."""
    events = []
    for _ in range(rnd.randint(1, 25)):
        roll = rnd.random()
        if only == "chat" and 0.6 <= roll < 0.9:
            roll = 0.95 if roll < 0.7 else 0.3
        if only == "anthropic":
            roll = 0.7 if roll < 0.8 else 0.8
        if only == "chat" and roll > 0.98:
            events.append(b"data: [DONE]\n\n")
            continue
        text = rnd.choice(PIECES)
        if roll < 0.6:
            delta = {"index": rnd.randint(0, 1), "delta": {"content": text}}
            events.append(b"data: " + json.dumps({"choices": [delta]}).encode() + b"\n\n")
        elif roll < 0.75:
            data = {"type": "content_block_delta", "index": rnd.randint(0, 1)}
            data["delta"] = {"type": "text_delta", "text": text}  # type: ignore[assignment]
            body = json.dumps(data).encode()
            events.append(b"event: content_block_delta\ndata: " + body + b"\n\n")
        elif roll < 0.85:
            events.append(b'event: ping\ndata: {"type": "ping"}\n\n')
        elif roll < 0.9:
            events.append(b": keep-alive\n\n")
        else:
            events.append(b'data: {"choices": [], "usage": {"total_tokens": 3}}\n\n')
    return events


class EventByEvent(EventTextGuard):
    """The guard without its batch paths (a chunk's events at once, a block of plain events):
    every event settled on its own (the reference)."""

    def _settle_quiet(self, texts: list) -> bool:  # type: ignore[type-arg]
        return False


def _guarded(
    chunks: list[bytes], guard_type: type[EventTextGuard] = EventTextGuard
) -> tuple[bytes, int]:
    stream = REDACTOR.stream()
    guard = guard_type(REDACTOR)
    out = b""
    for chunk in chunks:
        out += b"".join(e.raw for e in guard.feed_events(stream.feed(chunk)))
    out += b"".join(e.raw for e in guard.finish_events(stream.finish()))
    return out, stream.hits + guard.hits


@pytest.mark.parametrize("only", ["", "chat", "anthropic"])
@pytest.mark.parametrize("seed", range(300))
def test_a_chunk_of_many_events_is_guarded_as_its_events_one_by_one(seed: int, only: str) -> None:
    rnd = random.Random(seed)
    events = _stream(rnd, only)
    one_by_one = _guarded(events, EventByEvent)  # the reference: event by event
    whole = _guarded([b"".join(events)])  # every event in one chunk: the batch path
    data = b"".join(events)
    cuts = sorted(rnd.sample(range(len(data) + 1), min(len(data) + 1, 6)))
    cut = _guarded([data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)])
    assert whole == one_by_one == cut
    assert OPENAI_KEY.encode() not in whole[0] and ANTHROPIC_KEY.encode() not in whole[0]


def test_a_key_split_across_events_of_one_chunk_is_redacted() -> None:
    deltas = ["Your key: ", OPENAI_KEY[:4], OPENAI_KEY[4:12], OPENAI_KEY[12:], " ok"]
    events = [
        b"data: " + json.dumps({"choices": [{"index": 0, "delta": {"content": d}}]}).encode()
        for d in deltas
    ]
    out, hits = _guarded([b"\n\n".join(events) + b"\n\n"])
    text = "".join(
        json.loads(line[6:])["choices"][0]["delta"]["content"]
        for line in out.split(b"\n")
        if line.startswith(b"data: ")
    )
    assert hits == 1 and OPENAI_KEY[4:] not in text and "[redacted:OPENAI_API_KEY]" in text


def _framed(chunks: list[bytes], framer: EventFramer) -> list[tuple[bytes, object]]:
    def seen(raw: RawEvent) -> tuple[bytes, object]:
        event = raw.event
        fields = None if event is None else (event.event, event.data, event.id, event.retry)
        return raw.raw, fields

    out = [seen(raw) for chunk in chunks for raw in framer.feed(chunk)]
    rest = framer.finish()
    return out + ([seen(rest)] if rest is not None else [])


@pytest.mark.parametrize("seed", range(300))
def test_common_events_frame_as_the_line_decoder_frames_them(seed: int) -> None:
    rnd = random.Random(seed)
    parts = [b"data: ", b"data:", b"event: x\n", b"id: 7\n", b"retry: 5\n", b": c\n", b"{}"]
    parts += [b"\n", b"\n\n", b"\r\n", b"\r", b"\xc3\xa9", b"\xc3", b'data: {"a":1}\n\n']
    data = b"".join(rnd.choice(parts) for _ in range(rnd.randint(0, 30)))
    # Fed one byte at a time, no event is ever whole in the buffer at once: the decoder path.
    by_byte = _framed([data[i : i + 1] for i in range(len(data))], EventFramer())
    assert _framed([data], EventFramer()) == by_byte


@pytest.mark.parametrize("padding", [0, 10, 590, 600, 5000])
def test_a_literal_key_is_found_in_short_and_long_chunks_alike(padding: int) -> None:
    # Up to a few hundred bytes one regex looks for every key, beyond that one scan per key.
    for key in (OPENAI_KEY, ANTHROPIC_KEY):
        data = b"x" * padding + key.encode() + b" tail"
        out, hits = REDACTOR.redact(data)
        assert hits == 1 and key.encode() not in out and out.startswith(b"x" * padding)
        stream = REDACTOR.stream()
        assert key.encode() not in stream.feed(data) + stream.finish()
