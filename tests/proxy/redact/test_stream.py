"""The live tap's one-framing path: the key guard hands the usage meter the events it framed and
parsed (`StreamCleaner` -> `StreamMeter.feed_events`). It must relay and meter exactly what the
byte path (the guard's bytes, framed again by the meter) does, at every chunking."""

from __future__ import annotations

import json

import pytest
from mitmproxy import http

from proxy.flow.callstate import CallState
from proxy.metering.usage import StreamMeter
from proxy.redact.events import EventTextGuard
from proxy.redact.secrets import SecretRedactor
from proxy.redact.stream import StreamCleaner

KEY = "sk-proj-test-0123456789abcdefghijklmnop"


def _chunk(delta: dict[str, object] | None, usage: dict[str, int] | None = None) -> bytes:
    event: dict[str, object] = {"id": "c", "model": "gpt-4.1-mini", "choices": []}
    if delta is not None:
        event["choices"] = [{"index": 0, "delta": delta, "finish_reason": None}]
    if usage is not None:
        event["usage"] = usage
    return b"data: " + json.dumps(event).encode() + b"\n\n"


STREAM = (
    _chunk({"role": "assistant", "content": ""})
    + _chunk({"content": "the key is " + KEY[:12]})  # the key split across two events
    + _chunk({"content": KEY[12:] + " and more"})
    + b": a comment\n\n"
    + _chunk({"content": "done"})
    + _chunk(None, {"prompt_tokens": 9, "completion_tokens": 7, "total_tokens": 16})
    + b"data: [DONE]\n"  # no closing empty line: the unterminated last event
)


def _byte_path(data: bytes, size: int, hide: bool) -> tuple[bytes, object]:
    redactor = SecretRedactor({"OPENAI_API_KEY": KEY})
    secrets, guard = redactor.stream(), EventTextGuard(redactor)
    meter = StreamMeter("openai.chat", "gpt-4.1-mini", hide_usage_chunk=hide)
    out = b""
    for i in range(0, len(data), size):
        out += meter.feed(guard.feed(secrets.feed(data[i : i + size])))
    out += meter.feed(guard.finish(secrets.finish())) + meter.finish()
    return out, meter.usage()


def _event_path(data: bytes, size: int, hide: bool) -> tuple[bytes, object]:
    redactor = SecretRedactor({"OPENAI_API_KEY": KEY})
    state = CallState("openai", "/v1/chat/completions", "POST", "arm", "", 0.0)
    response = http.Response.make(200, b"", {"content-type": "text/event-stream"})
    cleaner = StreamCleaner(redactor, state, response)
    meter = StreamMeter("openai.chat", "gpt-4.1-mini", hide_usage_chunk=hide)
    out = b""
    for i in range(0, len(data), size):
        out += meter.feed_events(cleaner.feed(data[i : i + size]))
    out += meter.feed_events(cleaner.finish())
    assert "secret_redacted" in state.flags
    return out, meter.usage()


@pytest.mark.parametrize("hide", [False, True])
@pytest.mark.parametrize("size", [1, 7, 64, len(STREAM)])
def test_event_path_relays_and_meters_as_the_byte_path(size: int, hide: bool) -> None:
    relayed, usage = _event_path(STREAM, size, hide)
    assert (relayed, usage) == _byte_path(STREAM, size, hide)
    assert KEY.encode() not in relayed and b"[redacted:OPENAI_API_KEY]" in relayed
    assert (b'"usage"' in relayed) is not hide
    assert usage.source == "vendor" and usage.output == 7 and usage.terminal_seen  # type: ignore[attr-defined]


def test_event_path_meters_a_cut_stream_from_the_drained_tail() -> None:
    cut = STREAM.index(b"and more")
    redactor = SecretRedactor({"OPENAI_API_KEY": KEY})
    state = CallState("openai", "/v1/chat/completions", "POST", "arm", "", 0.0)
    response = http.Response.make(200, b"", {"content-type": "text/event-stream"})
    cleaner = StreamCleaner(redactor, state, response)
    meter = StreamMeter("openai.chat", "gpt-4.1-mini")
    meter.feed_events(cleaner.feed(STREAM[:cut]))
    meter.feed_events(cleaner.drain())  # never relayed, but the vendor sent (and bills) it
    # The byte path, drained the same way.
    secrets, guard = redactor.stream(), EventTextGuard(redactor)
    bytes_meter = StreamMeter("openai.chat", "gpt-4.1-mini")
    bytes_meter.feed(guard.feed(secrets.feed(STREAM[:cut])))
    bytes_meter.feed(guard.finish(secrets.finish()))
    usage = meter.usage()
    assert usage == bytes_meter.usage() and not usage.terminal_seen
    assert usage.source == "proxy_count" and usage.counted_output_text.startswith("the key is")


CLEAN = (
    _chunk({"role": "assistant", "content": ""})
    + _chunk({"content": "no key here, "})
    + _chunk({"content": "only words"})
    + _chunk(None, {"prompt_tokens": 9, "completion_tokens": 5, "total_tokens": 14})
    + b"data: [DONE]\n\n"
)


@pytest.mark.parametrize("keys", [{}, {"OPENAI_API_KEY": KEY}])
@pytest.mark.parametrize("hide", [False, True])
@pytest.mark.parametrize("size", [1, 7, 64, len(CLEAN)])
def test_a_stream_without_a_key_goes_out_and_is_metered_as_it_came(
    keys: dict[str, str], hide: bool, size: int
) -> None:
    # Whole runs of its events go as blocks (proxy/flow/sse_block.py), with secrets configured
    # or none; the reference is the meter reading the vendor's bytes itself.
    state = CallState("openai", "/v1/chat/completions", "POST", "arm", "", 0.0)
    response = http.Response.make(200, b"", {"content-type": "text/event-stream"})
    cleaner = StreamCleaner(SecretRedactor(keys), state, response)
    meter = StreamMeter("openai.chat", "gpt-4.1-mini", hide_usage_chunk=hide)
    reference = StreamMeter("openai.chat", "gpt-4.1-mini", hide_usage_chunk=hide)
    out = expected = b""
    for i in range(0, len(CLEAN), size):
        out += meter.feed_events(cleaner.feed(CLEAN[i : i + size]))
        expected += reference.feed(CLEAN[i : i + size])
    out += meter.feed_events(cleaner.finish())
    expected += reference.finish()
    assert out == expected and (b'"usage"' in out) is not hide
    assert meter.usage() == reference.usage() and meter.usage().output == 5
    assert "secret_redacted" not in state.flags
