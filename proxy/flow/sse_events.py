"""Byte-exact framing of a Server-Sent Events stream for a relaying proxy.

Why not a plain SSE client: a client turns bytes into events and throws the bytes away, but the
proxy must relay the vendor's bytes unchanged (and, for one case, drop exactly one event). So this
module only finds where each event's bytes end -- lines end at CRLF, LF or CR, an event ends at
an empty line -- and hands each line to `httpx_sse`'s `SSEDecoder` for the field grammar
(`data:` joining, `event:`, comments, the optional space after the colon), so the event grammar
is not hand-rolled. httpx-sse is chosen over the vendor SDKs' decoders because it is a small,
spec-tested, dependency-free SSE library, while the SDKs' `_streaming` modules are internals that
change with every SDK release; its decoder lives in `httpx_sse._decoders` (pin httpx-sse < 0.5).
"""

from __future__ import annotations

import re
from typing import Any, Final, NamedTuple

from httpx_sse import ServerSentEvent
from httpx_sse._decoders import SSEDecoder

_LINE_END = re.compile(rb"\r\n|\r|\n")


class RawEvent(NamedTuple):
    """One framed piece of the stream: its exact bytes (the ending empty line included) and the
    event they dispatch, or None for a piece that dispatches nothing (comments, stray blank
    lines, or a cut last event whose fields never arrived). A named tuple, not a frozen
    dataclass: one is made per event, and a frozen dataclass costs several times as much."""

    raw: bytes
    event: ServerSentEvent | None


#: `Relayed.data` of an event nobody parsed as JSON (its data is not an object or an array).
UNPARSED: Final = object()


class Relayed(NamedTuple):
    """An event on its way to the arm, passed from one stage of the relay to the next so that
    the stream is framed and its JSON parsed once (the key guard, then the usage meter): the
    bytes that go out, the event they dispatch, and its parsed JSON when a stage had it."""

    raw: bytes
    event: ServerSentEvent | None
    data: Any = UNPARSED


class EventFramer:
    """Splits arbitrarily chunked bytes into `RawEvent`s; every byte fed comes out exactly once."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._line_start = 0  # where the first not yet decoded line starts in `_buffer`
        self._decoder = SSEDecoder()
        self._finished = False

    @property
    def idle(self) -> bool:
        """Nothing buffered and no field of an unfinished event held: the next bytes start an
        event, so a caller may frame whole events itself (`proxy.flow.sse_block`) and feed only
        what follows them."""
        return not self._buffer and not self._decoder_holds_fields()

    def _decoder_holds_fields(self) -> bool:
        """The line decoder holds a field of an event no empty line has closed yet."""
        decoder = self._decoder
        return bool(decoder._event or decoder._data or decoder._retry is not None)

    def feed(self, chunk: bytes) -> list[RawEvent]:
        """The events that `chunk` completes; a trailing partial event stays buffered."""
        if self._finished:
            raise RuntimeError("EventFramer.feed() after finish()")
        buffer = self._buffer
        buffer += chunk
        out: list[RawEvent] = []
        event_start = 0
        line_start = self._line_start
        if line_start == 0:
            event_start = line_start = self._plain_events(buffer, out)
        while True:
            match = _LINE_END.search(buffer, line_start)
            if match is None:
                break
            # A CR that ends the buffer may be the first half of a CRLF split across chunks:
            # deciding now would see a false empty line when the LF arrives.
            if match.end() == len(buffer) and buffer[-1:] == b"\r":
                break
            line = bytes(buffer[line_start : match.start()])
            event = self._decoder.decode(line.decode("utf-8", "replace"))
            line_start = match.end()
            if not line:
                out.append(RawEvent(bytes(buffer[event_start:line_start]), event))
                event_start = line_start
        # Trim once per feed rather than per event: deleting from the front is O(len).
        del buffer[:event_start]
        self._line_start = line_start - event_start
        return out

    def _plain_events(self, buffer: bytearray, out: list[RawEvent]) -> int:
        """The common events at the front of `buffer`, framed without the line-by-line decoder:
        `data: X` or `event: E` then `data: X`, LF line ends, closed by an empty line, with the
        decoder holding no field of an unfinished event. They dispatch what the decoder would
        (the same event name, data and last event id); anything else stops here and is left to
        the decoder. Returns where the events it framed end."""
        if self._decoder_holds_fields():
            return 0
        last_id = self._decoder._last_event_id
        data = bytes(buffer)  # one copy; the events are slices of it
        # With no CR anywhere, no event needs the test for one.
        crs = b"\r" in data
        find = data.find
        start = 0
        while True:
            end = find(b"\n\n", start)
            if end < 0:
                return start
            raw = data[start : end + 2]
            if crs and b"\r" in raw:
                return start
            name = ""
            if raw.startswith(b"data:"):
                body = raw[5:-2]
            elif raw.startswith(b"event:"):
                head, newline, body = raw[6:-2].partition(b"\n")
                if not newline or not body.startswith(b"data:"):
                    return start
                name = (head[1:] if head[:1] == b" " else head).decode("utf-8", "replace")
                body = body[5:]
            else:
                return start
            if b"\n" in body:
                return start
            value = (body[1:] if body[:1] == b" " else body).decode("utf-8", "replace")
            out.append(RawEvent(raw, ServerSentEvent(name, value, last_id)))
            start = end + 2

    def finish(self) -> RawEvent | None:
        """At end of stream: the buffered remainder, if any, with the event it would dispatch.

        A conforming client drops an event that is not closed by an empty line. The meter still
        wants to see it (a vendor may end with `data: [DONE]\\n` and no empty line), so its
        fields are decoded and dispatched here; a truncated line still fails to parse as JSON
        downstream, so a cut event is never mistaken for a whole one.
        """
        if self._finished:
            return None
        self._finished = True
        rest = bytes(self._buffer)
        self._buffer.clear()
        if not rest:
            return None
        event: ServerSentEvent | None = None
        # Lines before `_line_start` were decoded by feed(); what is left is at most one line,
        # possibly ended by the held-back CR.
        pending = rest[self._line_start :]
        if pending.endswith(b"\r"):
            pending = pending[:-1]
        if pending:
            event = self._decoder.decode(pending.decode("utf-8", "replace"))
        if event is None:
            event = self._decoder.decode("")
        return RawEvent(rest, event)
