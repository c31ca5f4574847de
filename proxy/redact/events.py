"""A key split across SSE events: each event holds a piece of it, the SDK joins the text deltas.

proxy.redact.secrets works on bytes, so a key cut in two by the event framing (`"text":"...
sk-ant-"` in
one event, `"text":"api03-..."` in the next, JSON around both) is not a byte sequence anywhere.
`EventTextGuard` reads the text an SSE stream builds up per channel (a content block, a choice,
an output item) and, while a channel's text ends with what could be the start of a key, holds
that event back with everything after it; when the next delta completes a key, the text of the
held events is rewritten (the joined, redacted text in the first of them, "" in the rest) and
they go out. When the text turns out not to be a key they go out unchanged, byte for byte.

The holding is bounded by the key length in characters, and events without text (Anthropic's
`ping`) pass through a hold without ending it; any other event without text ends it (a channel
does not continue past its stop event). Which fields are text: every string under a key the
formats use for streamed text (`text`, `thinking`, `partial_json`, `content`, `arguments`,
`delta`, `refusal`, `reasoning_content`, `reasoning`); the channel is the event type, its index
fields and the path to the string.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from httpx_sse import ServerSentEvent

from proxy.flow import DONE, UNPARSED, EventFramer, RawEvent, Relay, Relayed, plain_block
from proxy.redact.secrets import SecretRedactor
from rundir.calls import DecodeError
from vendors.chat_chunk import ChatChunk

# OpenAI's `refusal` and the reasoning text compatible upstreams stream (`reasoning_content`,
# `reasoning`) are joined by clients like the content: the meter counts them as output too.
_TEXT_KEYS = frozenset(
    {"text", "thinking", "partial_json", "content", "arguments", "delta"}
    | {"refusal", "reasoning_content", "reasoning"}
)
#: The text fields of vendors.chat_chunk.ChatDelta that `_TEXT_KEYS` names.
_CHUNK_TEXT_KEYS = tuple(name for name in ("content", "refusal") if name in _TEXT_KEYS)
_INDEX_KEYS = ("index", "output_index", "content_index", "item_id")  # 4: _read reads each
_TRANSPARENT = frozenset({"ping"})
#: A text ending in fewer characters of a key's start than this is not held: holding on one
#: character would delay every delta ending in "s" (the "sk-" keys) by one event. If the key
#: does follow, those characters are out (the keys' public prefix, "sk-"), the rest is redacted.
MIN_HELD_PREFIX = 4

Path = tuple[str | int, ...]
Channel = tuple[Any, ...]
#: One text string of an event: its channel, where it is in the event's JSON, and the text.
Text = tuple[Channel, Path, str]
#: An event as `_read` leaves it: the framed event, its parsed JSON (or UNPARSED), its texts.
Read = tuple[RawEvent, Any, list[Text]]


@dataclass(slots=True)
class _Held:
    raw: bytes
    event: ServerSentEvent | None = None
    name: str | None = None  # the SSE event name, to write it back
    data: Any = None  # parsed JSON, when the event's text is rewritten
    parsed: bool = False  # `data` holds the event's JSON
    dirty: bool = False

    def relayed(self) -> Relayed:
        # The parsed JSON goes along (rewritten, if it was), so the meter need not parse again.
        return Relayed(self.bytes(), self.event, self.data if self.parsed else UNPARSED)

    def bytes(self) -> bytes:
        if not self.dirty:
            return self.raw
        head = f"event: {self.name}\n".encode() if self.name else b""
        # ensure_ascii: a lone surrogate the vendor sent stays valid JSON on the way out.
        return head + b"data: " + json.dumps(self.data, separators=(",", ":")).encode() + b"\n\n"


@dataclass
class _Channel:
    """One text the SDK joins: the end of what went out, and the events held after it."""

    tail: str = ""  # the last characters already released (a key may have started there)
    parts: list[tuple[_Held, Path]] = field(default_factory=list)

    def held_text(self) -> str:
        return "".join(_get(held.data, path) for held, path in self.parts)


class EventTextGuard:
    def __init__(self, redactor: SecretRedactor) -> None:
        self.redactor = redactor
        self.framer = EventFramer()
        self.queue: list[_Held] = []
        self.channels: dict[Channel, _Channel] = {}
        self.hits = 0

    def feed(self, chunk: bytes) -> bytes:
        if not self.redactor or not chunk:
            return chunk
        return b"".join(e.raw for e in self.feed_events(chunk))

    def finish(self, chunk: bytes = b"") -> bytes:
        """The end of the stream: everything held goes out (nothing can complete a key now)."""
        if not self.redactor:
            return chunk
        return b"".join(e.raw for e in self.finish_events(chunk))

    def feed_events(self, chunk: bytes) -> list[Relay]:
        """`feed`, as the events that go out (for the next stage: framed and parsed once)."""
        if not chunk:
            return []
        out: list[Relay] = []
        if not self.queue and self.framer.idle:
            # The common case first: a run of plain events, framed and parsed in one pass, goes
            # out as one block when nothing in it can be a key (the test of `_quiet`). When
            # something can, the chunk is framed again below, event by event: rare, and the
            # holding is that path's.
            found = plain_block(chunk)
            if found is not None:
                block, rest = found
                if not self.redactor or self._settle_quiet(
                    [text for value in block.values for text in _texts(value)]
                ):
                    out.append(block)
                    chunk = rest
                    if not chunk:
                        return out
        raws = self.framer.feed(chunk)
        if not self.redactor:
            return out + [Relayed(raw.raw, raw.event) for raw in raws]
        framed = [_read(raw) for raw in raws]
        if not self.queue:
            quiet = self._quiet(framed)
            if quiet is not None:
                return out + quiet
        for raw, data, texts in framed:
            self._event(_held(raw, data), texts, out)
        return out

    def _quiet(self, framed: list[Read]) -> list[Relay] | None:
        """The chunk's events, all at once, when nothing is held and each channel's text with
        the chunk's deltas holds no key and ends in no key's start worth holding: then the
        event-by-event pass would release every one of them unchanged, and leave each channel
        the same tail (its text's last characters). None when that is not so: the caller takes
        the events one by one. One check per channel and chunk instead of one per event."""
        if not self._settle_quiet([text for _, _, texts in framed for text in texts]):
            return None
        # What `_Held.relayed` gives for an event released unchanged, without making the _Held.
        return [Relayed(raw.raw, raw.event, data) for raw, data, _ in framed]

    def _settle_quiet(self, texts: list[Text]) -> bool:
        """Whether every channel's text, with `texts` (a chunk's, in order) added, holds no key
        and ends in no key's start worth holding; if so, each channel's tail moves on as the
        event-by-event pass would move it. Nothing changes when not."""
        deltas: dict[Channel, list[str]] = {}
        for key, _, text in texts:
            deltas.setdefault(key, []).append(text)
        joined: dict[Channel, str] = {}
        for key, parts in deltas.items():
            channel = self.channels.get(key)
            text = (channel.tail if channel else "") + "".join(parts)
            # Any key in a piece of this text is in the whole of it: no event would be rewritten.
            if not self.redactor.settled(text.encode("utf-8", "surrogatepass"), MIN_HELD_PREFIX):
                return False
            joined[key] = text
        keep = self.redactor.longest - 1
        for key, text in joined.items():
            channel = self.channels.setdefault(key, _Channel())
            channel.tail = text[-keep:] if keep > 0 else ""
        return True

    def finish_events(self, chunk: bytes = b"") -> list[Relay]:
        """`finish`, as events; the last may be one no empty line closed (see EventFramer)."""
        out = self.feed_events(chunk)
        rest = self.framer.finish()
        out += self._release()
        if rest is not None:
            out.append(Relayed(rest.raw, rest.event))
        return out

    def _event(self, held: _Held, texts: list[Text], out: list[Relay]) -> None:
        if not texts:
            if self.queue and (held.event is None or held.event.event in _TRANSPARENT):
                self.queue.append(held)
                return
            # A stop or usage event: no channel continues a held key.
            out += self._release()
            out.append(held.relayed())
            return
        self.queue.append(held)
        for key, path, _ in texts:
            channel = self.channels.setdefault(key, _Channel())
            channel.parts.append((held, path))
            self._settle(channel)
        if any(channel.parts for channel in self.channels.values()):
            return
        out += self._release()

    def _settle(self, channel: _Channel) -> None:
        tail, held = channel.tail, channel.held_text()
        text = tail + held
        if self.redactor.settled(text.encode("utf-8", "surrogatepass"), MIN_HELD_PREFIX):
            self._released(channel)  # the common case, found in one pass: no key, none begun
            return
        clean = self.redactor.redact_text(text)
        if clean != text:
            self.hits += 1
            # Where the key began: if in the released tail, those few characters are out
            # already (at most MIN_HELD_PREFIX - 1 of the key's first); the rest is the marker.
            start = _common_prefix(text, clean)
            replacement = clean[start:] if start < len(tail) else clean[len(tail) :]
            first, first_path = channel.parts[0]
            _set(first, first_path, replacement)
            for event, path in channel.parts[1:]:
                _set(event, path, "")
            channel.parts = channel.parts[:1]
            held = replacement
        joined = (tail + held).encode("utf-8", "surrogatepass")
        # A possible key start of a few characters goes out: what follows it is redacted then.
        if len(joined) - self.redactor.partial_start(joined) < MIN_HELD_PREFIX:
            self._released(channel)

    def _released(self, channel: _Channel) -> None:
        joined = channel.tail + channel.held_text()
        # Decoded text: a key in it is literal, so its length bounds what may still matter.
        keep = self.redactor.longest - 1
        channel.tail = joined[-keep:] if keep > 0 else ""
        channel.parts = []

    def _release(self) -> list[Relay]:
        for channel in self.channels.values():
            if channel.parts:
                self._released(channel)
        out: list[Relay] = [held.relayed() for held in self.queue]
        self.queue.clear()
        return out


def _read(raw: RawEvent) -> Read:
    """An event, its parsed JSON (UNPARSED when its data is not a JSON object or array) and its
    text strings, each with its channel and path. A plain function of the event, so the batch
    path (`_quiet`) needs no `_Held` for an event it releases unchanged."""
    event = raw.event
    if event is None:
        return raw, UNPARSED, []
    text = event.data
    # OpenAI's "[DONE]" starts like an array: the parser would raise on every stream's end.
    if not text.startswith(("{", "[")) or text == "[DONE]":
        return raw, UNPARSED, []
    try:
        data = _parse(text)
        return raw, data, _texts(data)
    except ValueError:
        return raw, UNPARSED, []
    except RecursionError as e:
        # JSON nested deeper than the parser or the walk goes: its texts cannot be read, so
        # nor checked for a key. The stream is cut as one the proxy cannot decode.
        raise DecodeError("an event nests its JSON too deep to be checked for keys") from e


def _texts(data: Any) -> list[Text]:
    """The text strings of an event's parsed JSON, each with its channel and path (none for
    OpenAI's [DONE], which a block holds as DONE)."""
    if data is DONE:
        return []
    if type(data) is ChatChunk:
        return _chunk_texts(data)
    found: list[tuple[Path, Path, str]] = []
    _walk(data, (), (), found)
    if not found:
        return []
    kind: Any = None
    indexes: tuple[Any, ...] = ()
    if type(data) is dict:
        get = data.get
        kind, indexes = (
            get("type"),
            (
                get(_INDEX_KEYS[0]),
                get(_INDEX_KEYS[1]),
                get(_INDEX_KEYS[2]),
                get(_INDEX_KEYS[3]),
            ),
        )
    return [((kind, indexes, logical), path, text) for path, logical, text in found]


#: A chat chunk's channel: no "type" field and no index field at its top level (see `_texts`).
_CHUNK_CHANNEL = (None, (None, None, None, None))


def _content_at(position: int, index: int) -> tuple[Channel, Path]:
    """The channel and path of the content of the choice at `position` with `index`."""
    return (*_CHUNK_CHANNEL, ("choices", f"#{index}", "delta", "content")), (
        "choices",
        position,
        "delta",
        "content",
    )


#: `_content_at(0, i)` for the first few indexes: made once, not per event (bounded: an index is
#: the vendor's to choose).
_FIRST_CONTENT = {index: _content_at(0, index) for index in range(8)}


def _chunk_texts(chunk: ChatChunk) -> list[Text]:
    """`_texts` of the dict the chunk would decode to, read off the struct: its text fields
    under each choice's delta, named as `_walk` names them (the choice by its `index`)."""
    choices = chunk.choices
    if len(choices) == 1:  # the common chunk: one choice, a content delta or none
        choice = choices[0]
        delta = choice.delta
        if delta.refusal is None:
            if delta.content is None:
                return []
            where = _FIRST_CONTENT.get(choice.index) or _content_at(0, choice.index)
            return [(where[0], where[1], delta.content)]
    found: list[Text] = []
    for position, choice in enumerate(chunk.choices):
        delta = choice.delta
        name = f"#{choice.index}"
        for key in _CHUNK_TEXT_KEYS:
            text = getattr(delta, key)
            if text is not None:
                channel = (*_CHUNK_CHANNEL, ("choices", name, "delta", key))
                found.append((channel, ("choices", position, "delta", key), text))
    return found


def _held(raw: RawEvent, data: Any) -> _Held:
    if data is UNPARSED:
        return _Held(raw.raw, raw.event)
    event = raw.event
    assert event is not None  # only an event's data is parsed
    name = event.event if event.event != "message" else None
    return _Held(raw.raw, event, name=name, data=data, parsed=True)


_SCAN = json.JSONDecoder().scan_once  # type: ignore[attr-defined]  # set in its __init__


def _parse(text: str) -> Any:
    """`json.loads(text)` for an event's data: the C scanner called directly, without
    json.loads' two Python layers (a third of its time on a chunk's small events); anything
    the scanner does not take whole goes to json.loads, which parses it or raises as ever."""
    try:
        value, end = _SCAN(text, 0)
    except StopIteration:
        return json.loads(text)
    return value if end == len(text) else json.loads(text)


def _common_prefix(a: str, b: str) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), len(a))


def _walk(node: Any, path: Path, logical: Path, found: list[tuple[Path, Path, str]]) -> None:
    """Every text string: where it is, the channel it belongs to (`logical`: a list item with
    an `index` field, such as an OpenAI choice, is named by it, not by its position), and the
    text. `node` is json.loads output, so exact type tests suffice (cheaper than isinstance:
    this walk runs on every event)."""
    # Only containers are descended into: most values of a chunk are scalars, and a call per
    # scalar was most of this walk's cost on every event.
    if type(node) is dict:
        for key, value in node.items():
            kind = type(value)
            if kind is str:
                if key in _TEXT_KEYS:
                    found.append(((*path, key), (*logical, key), value))
            elif kind is dict or kind is list:
                _walk(value, (*path, key), (*logical, key), found)
    elif type(node) is list:
        for position, value in enumerate(node):
            kind = type(value)
            if kind is dict:
                name = value.get("index", position)
            elif kind is list:
                name = position
            else:
                continue
            _walk(value, (*path, position), (*logical, f"#{name}"), found)


def _get(data: Any, path: Path) -> str:
    for step in path:
        data = data[step]
    return str(data)


def _set(held: _Held, path: Path, value: str) -> None:
    node = held.data
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value
    held.dirty = True
