"""proxy.redact.events: a key split across SSE text deltas never reaches the joined text."""

from __future__ import annotations

import json
from typing import Any

import pytest

from proxy.redact.events import MIN_HELD_PREFIX, EventTextGuard
from proxy.redact.secrets import SecretRedactor

KEY = "sk-ant-study-SECRET-0123456789abcdef"
REDACTOR = SecretRedactor({"ANTHROPIC_API_KEY": KEY})
MARK = "[redacted:ANTHROPIC_API_KEY]"
PING = b'event: ping\ndata: {"type":"ping"}\n\n'
STOP = b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
DONE = b"data: [DONE]\n\n"


def _anthropic(text: str, index: int = 0) -> bytes:
    data = {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta"}}
    data["delta"]["text"] = text  # type: ignore[index]
    return b"event: content_block_delta\ndata: " + json.dumps(data).encode() + b"\n\n"


def _chat(text: str, choice: int = 0) -> bytes:
    data = {"choices": [{"index": choice, "delta": {"content": text}}]}
    return b"data: " + json.dumps(data).encode() + b"\n\n"


def _responses(text: str) -> bytes:
    data = {"type": "response.output_text.delta", "output_index": 0, "content_index": 0}
    return b"data: " + json.dumps({**data, "delta": text}).encode() + b"\n\n"


def _events(out: bytes) -> list[Any]:
    return [json.loads(line[6:]) for line in out.split(b"\n") if line.startswith(b"data: {")]


def _joined(out: bytes) -> str:
    """The text an SDK builds from the deltas (any of the three formats)."""
    text = ""
    for data in _events(out):
        if data.get("type") == "content_block_delta":
            text += data["delta"]["text"]
        elif data.get("type") == "response.output_text.delta":
            text += data["delta"]
        elif "choices" in data:
            text += data["choices"][0]["delta"].get("content") or ""
    return text


def _run(events: list[bytes], pieces: int = 0) -> bytes:
    guard = EventTextGuard(REDACTOR)
    stream = b"".join(events)
    if pieces:
        size = max(1, len(stream) // pieces)
        parts = [stream[i : i + size] for i in range(0, len(stream), size)]
    else:
        parts = events
    return b"".join(guard.feed(p) for p in parts) + guard.finish()


@pytest.mark.parametrize("make", [_anthropic, _chat, _responses])
def test_a_key_split_between_two_deltas_at_every_offset(make: Any) -> None:
    for cut in range(1, len(KEY)):
        out = _run([make("hello " + KEY[:cut]), PING, make(KEY[cut:] + " world"), STOP])
        assert KEY.encode() not in out
        # A text ending in the key's first few characters is not held: those few go out.
        shown = KEY[:cut] if cut < MIN_HELD_PREFIX else ""
        assert _joined(out) == f"hello {shown}{MARK} world", cut


@pytest.mark.parametrize("field", ["refusal", "reasoning_content", "reasoning"])
def test_a_key_split_across_the_other_chat_text_fields(field: str) -> None:
    # OpenAI's refusal and compatible upstreams' reasoning text are joined by clients as the
    # content is (the meter counts them as output), so a key split across them is redacted too.
    def delta(text: str) -> bytes:
        data = {"id": "c", "choices": [{"index": 0, "delta": {field: text}}]}
        return b"data: " + json.dumps(data).encode() + b"\n\n"

    for pieces in (0, 1, 7):
        out = _run([delta("hello " + KEY[:9]), delta(KEY[9:] + " world"), DONE], pieces)
        joined = "".join(e["choices"][0]["delta"][field] for e in _events(out))
        assert KEY.encode() not in out and joined == f"hello {MARK} world", pieces


def test_one_character_per_event_and_arbitrary_network_pieces() -> None:
    events = [_anthropic(c) for c in f"x {KEY} y"] + [STOP]
    for pieces in (0, 3, 50, 1000):
        out = _run(events, pieces)
        # Each of "s", "k", "-" went out before the fourth character made them worth holding.
        assert _joined(out) == f"x {KEY[: MIN_HELD_PREFIX - 1]}{MARK} y"


def test_text_without_a_key_passes_byte_for_byte_and_is_held_at_most_one_event() -> None:
    guard = EventTextGuard(REDACTOR)
    word = _anthropic("lighthouses")  # ends with "s", the key's first character: not held
    assert guard.feed(word) == word
    first = _anthropic("keys look like sk-a")  # four characters of the key's start: held
    assert guard.feed(first) == b""
    second = _anthropic("nd so on")
    assert guard.feed(second) == first + second  # not a key: both out, unchanged
    assert guard.feed(STOP) == STOP
    assert guard.finish() == b""


def test_a_stop_event_releases_a_held_event_unchanged() -> None:
    guard = EventTextGuard(REDACTOR)
    held = _anthropic("the end: sk-ant")  # held: it could go on as the key
    assert guard.feed(held) == b""
    assert guard.feed(STOP) == held + STOP


def test_separate_channels_do_not_join() -> None:
    """Two content blocks (or choices) are separate texts: a key in neither is left alone,
    and a key split within one channel is found across the other's events."""
    out = _run([_chat(KEY[:10], 0), _chat("other", 1), _chat(KEY[10:], 0), DONE])
    assert KEY.encode() not in out
    zero = "".join(
        d["choices"][0]["delta"]["content"] for d in _events(out) if d["choices"][0]["index"] == 0
    )
    assert zero == MARK
    halves = _run([_anthropic(KEY[:10], 0), _anthropic(KEY[10:], 1), STOP])
    assert _joined(halves) == KEY  # not one text: each block alone holds no key


def test_a_cut_stream_never_releases_what_it_held() -> None:
    guard = EventTextGuard(REDACTOR)
    # The stream breaks after this event: finish() is never called, so nothing of it goes out.
    assert guard.feed(_anthropic("key: " + KEY[:20])) == b""


def test_no_secrets_configured_is_a_pass_through() -> None:
    guard = EventTextGuard(SecretRedactor({}))
    assert guard.feed(_anthropic("sk-ant")) == _anthropic("sk-ant")
