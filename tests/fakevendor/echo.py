"""The fake vendor quotes the credential it received back, as real upstreams have done: in a 401
("Incorrect API key provided: sk-..."), in the reply text, in a header; and compresses a reply
although the client asked for `accept-encoding: identity`.

Directives (see behaviour.py): `echo_key=error|text|escaped|header|events` (header: also in
the status line's reason phrase), `echo_split=N` (the
write that carries the key is split N bytes into it, with a pause, so the proxy reads it in two
pieces; with `events`, the key's first N characters end one text delta and the rest start the
next, so only the SDK's joined text holds it), `encode=gzip|br|deflate` (any reply, streams
flushed per event; `corrupt` labels a plain body gzip).
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable
from typing import Any

import brotli

from tests.fakevendor.behaviour import Behaviour, BehaviourError
from tests.fakevendor.replies import (
    PlannedReply,
    _dumps,
    _error,
    _event_prefix,
    _sse_json,
)

_HOLE = "\x00KEY\x00"  # stands where the key goes until the JSON is serialised
_TEXT_FIELDS = ("text", "content", "delta")


def apply_echo(planned: PlannedReply, behaviour: Behaviour, key: str | None) -> PlannedReply:
    kind = behaviour.echo_key
    if kind is not None and key:
        if kind == "error":
            planned = _error(
                planned.vendor,
                401,
                f"Incorrect API key provided: {key}. You can find your API key in the console.",
                planned.route,
            )
        elif kind == "header":
            planned.headers += [("x-echo-key", key), (f"x-key-{key}", "seen")]
            planned.reason = f"OK for {key}"
        elif kind == "events":
            _split_across_events(planned, key, behaviour.echo_split or len(key) // 2)
        elif kind == "nested":
            _nest_deep(planned, key)
        elif kind in ("text", "escaped"):
            form = _escaped(key) if kind == "escaped" else key.encode()
            _put_in_text(planned, form, behaviour.echo_split)
        else:
            raise BehaviourError(
                f"echo_key {kind!r}: use error, text, escaped, header, events or nested"
            )
    if behaviour.encode is not None:
        _encode(planned, behaviour.encode)
    return planned


def _escaped(key: str) -> bytes:
    """Every other character as a JSON \\u escape: still the key to any JSON parser."""
    return "".join(f"\\u{ord(c):04x}" if i % 2 else c for i, c in enumerate(key)).encode()


def _put_in_text(planned: PlannedReply, form: bytes, split: int | None) -> None:
    """Prefix the first non-empty reply text with the key (plain body or stream delta)."""
    for event in planned.events:
        data = _sse_json(event.data) if planned.stream else json.loads(event.data)
        if not isinstance(data, dict) or not _fill_hole(data):
            continue
        dumped = _dumps(data)
        hole = _dumps(_HOLE)[1:-1]  # the hole as it is serialised inside a JSON string
        at = dumped.index(hole)
        dumped = dumped.replace(hole, form + b" ")
        if planned.stream:
            prefix = _event_prefix(event.data) + b"data: "
            event.data = prefix + dumped + b"\n\n"
            at += len(prefix)
        else:
            event.data = dumped
        if split is not None:
            event.split_at = at + split
        return
    raise BehaviourError("echo_key: the reply has no text to put the key in")


#: Deeper than any JSON parser of Python reads (its recursion limit), a few hundred KB.
NEST_DEPTH = 100_000


def _nest_deep(planned: PlannedReply, key: str) -> None:
    """The first text delta of a stream carries the key inside JSON nested NEST_DEPTH deep: no
    parser that stops at a depth can read it, nor so check it for the key."""
    for event in planned.events if planned.stream else []:
        data = _sse_json(event.data)
        if isinstance(data, dict) and _edit_text(data, lambda text: text):
            deep = b"[" * NEST_DEPTH + _dumps(key) + b"]" * NEST_DEPTH
            body = _dumps(data)[:-1] + b',"deep":' + deep + b"}"
            event.data = _event_prefix(event.data) + b"data: " + body + b"\n\n"
            return
    raise BehaviourError("echo_key=nested: needs a stream with a text delta")


def _split_across_events(planned: PlannedReply, key: str, at: int) -> None:
    """The key's head ends the first text delta, its tail starts the second."""
    edits = [lambda text: f"{text} {key[:at]}", lambda text: f"{key[at:]} {text}"]
    for event in planned.events if planned.stream else []:
        data = _sse_json(event.data)
        if not edits:
            return
        if isinstance(data, dict) and _edit_text(data, edits[0]):
            event.data = _event_prefix(event.data) + b"data: " + _dumps(data) + b"\n\n"
            edits.pop(0)
    if edits:
        raise BehaviourError("echo_key=events: needs a stream with two text deltas")


def _edit_text(node: Any, edit: Callable[[str], str]) -> bool:
    """Apply `edit` to the first non-empty text string in `node`."""
    if isinstance(node, dict):
        for name, value in node.items():
            if name in _TEXT_FIELDS and isinstance(value, str) and value:
                node[name] = edit(value)
                return True
        return any(_edit_text(v, edit) for v in node.values())
    if isinstance(node, list):
        return any(_edit_text(v, edit) for v in node)
    return False


def _fill_hole(node: Any) -> bool:
    return _edit_text(node, lambda text: _HOLE + text)


def _encode(planned: PlannedReply, encoding: str) -> None:
    if encoding == "corrupt":
        # Says gzip, is not: what a proxy cannot read it must not pass on.
        planned.headers.append(("content-encoding", "gzip"))
        return
    if encoding == "br":
        compressor: Any = brotli.Compressor()
        step, flush, end = compressor.process, compressor.flush, compressor.finish
    elif encoding in ("gzip", "deflate"):
        zobj = zlib.compressobj(wbits=31 if encoding == "gzip" else 15)
        step, end = zobj.compress, zobj.flush

        def flush() -> bytes:
            return zobj.flush(zlib.Z_SYNC_FLUSH)
    else:
        raise BehaviourError(f"encode {encoding!r}: use gzip, br, deflate or corrupt")
    last = len(planned.events) - 1
    for index, event in enumerate(planned.events):
        # Each event flushed on its own, so a stream still arrives event by event.
        event.data = step(event.data) + (end() if index == last else flush())
        event.split_at = None
    planned.headers.append(("content-encoding", encoding))
