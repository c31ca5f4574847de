"""A chunk's run of plain SSE events, framed and parsed in one pass over its bytes.

The relay's common case (a vendor's stream read several events at a time) is a run of
`data: {...}` events (OpenAI's chat), or of `event: NAME` + `data: {...}` events (Anthropic,
OpenAI's Responses), one line per field, LF line ends. For such a run the per-event framing of
`proxy.flow.sse_events` (a line decoder, an event object and a tuple per event) is most of what
the tap spends: here the run is checked as a whole with a few byte counts, split once, and each
event's JSON decoded by msgspec's C decoder (json's own scanner costs twice as much per event).
The run then goes on as one `PlainBlock`: the key guard reads its texts, the meter its values, and
its bytes go out as they came.

Anything else (a CR, a comment or `id:` line, the two forms mixed, a field without its space, a
data line that is not a JSON object, JSON msgspec does not read exactly as `json.loads` does: a
lone surrogate, NaN, a number out of range, bytes that are not UTF-8) makes `plain_block` return
None, and the caller takes the event-by-event path, which decides those cases as it always has.
Where msgspec does decode, its values are `json.loads`'s (tests/proxy/flow/test_sse_block.py checks
that).
"""

from __future__ import annotations

from typing import Any, Final, NamedTuple

import msgspec

from proxy.flow.sse_events import Relayed
from vendors.chat_chunk import decode_chat_chunk

#: A block value for OpenAI's `data: [DONE]`, which is not JSON.
DONE: Final = object()

_PREFIX = b"data: "
_SEPARATOR = b"\n\ndata: "
_NAMED = b"event: "
_NAMED_SEPARATOR = b"\n\nevent: "
_decode = msgspec.json.Decoder().decode


class PlainBlock(NamedTuple):
    """Consecutive whole events, each `data: <JSON object>` (or `data: [DONE]`) on one line:
    their bytes as received (`raw`, what goes out), each event's line (`parts`, without the
    empty line that ends it) and its decoded value (`values`: a `ChatChunk` when the event is
    exactly OpenAI's common chat chunk, else a dict; or DONE)."""

    raw: bytes
    parts: list[bytes]
    values: list[Any]


#: What one stage of the tap hands the next: events one by one, or a block of plain ones.
Relay = Relayed | PlainBlock


class _NotPlain(Exception):
    """An event the block cannot take: the whole chunk goes event by event."""


def _value(body: bytes) -> Any:
    """One event's value: its data decoded (a ChatChunk if it is exactly one, else a dict), or
    DONE; raises for anything else."""
    if body[:1] == b"{":
        try:
            return decode_chat_chunk(body)
        except msgspec.ValidationError:
            pass  # valid JSON, another shape: read as a dict
        value = _decode(body)
        # msgspec raises on trailing data (`{...} 1`); the type test keeps the promise local.
        if type(value) is dict:
            return value
    elif body == b"[DONE]":
        return DONE
    raise _NotPlain


def _named_value(part: bytes) -> Any:
    """`_value` of an `event: NAME\ndata: X` event's X. The name is not needed: neither the key
    guard nor the meter reads it for an event they let through unchanged."""
    line_end = part.find(b"\n")
    if line_end < 0 or part[line_end : line_end + 7] != b"\ndata: ":
        raise _NotPlain
    return _value(part[line_end + 7 :])


def plain_block(chunk: bytes) -> tuple[PlainBlock, bytes] | None:
    """The plain events at the start of `chunk` as one block, and the bytes after them (an event
    not yet whole); None when the chunk does not start with a run of whole plain events that
    all decode, so that the caller frames it event by event. Plain: every event `data: X`
    (OpenAI's chat) or every event `event: NAME` then `data: X` (Anthropic, OpenAI's
    Responses), X one JSON object or [DONE], LF line ends."""
    named = chunk.startswith(_NAMED)
    if not named and not chunk.startswith(_PREFIX):
        return None
    end = chunk.rfind(b"\n\n") + 2
    if end < 2:
        return None
    raw = chunk[:end]
    if b"\r" in raw:
        return None
    parts = raw[:-2].split(b"\n\n")
    count = len(parts)
    # Each event exactly `data: X\n\n` (or `event: N\ndata: X\n\n`), N and X without a line
    # end: then the run holds two LFs per event (three) and no others, and every separator is
    # followed by the event's first field, with its space. That each event's one inner LF is
    # followed by its data field, `_named_value` checks.
    lines = 3 if named else 2
    separator = _NAMED_SEPARATOR if named else _SEPARATOR
    if raw.count(b"\n") != lines * count or raw.count(separator) != count - 1:
        return None
    try:
        if named:
            values = [_named_value(part) for part in parts]
        else:
            values = [_value(part[6:]) for part in parts]
    except (_NotPlain, msgspec.DecodeError, RecursionError):
        return None
    return PlainBlock(raw, parts, values), chunk[end:]
