"""The texts a body or a stored file holds, in every form a token could hide in.

A token can be missed three ways: the bytes are compressed, the JSON escapes it (`\\u00e9`, `\\"`),
or a streamed reply splits it across events (`"ZEB"` then `"RA-7731"`). So one body yields several
texts: the bytes as UTF-8, every JSON string value unescaped, and for server-sent events the delta
strings of all events joined with nothing between them, in order, which reassembles a token a
stream cut up. Delta strings are the values of the keys the vendors stream text under: Anthropic
`text`, `thinking`, `partial_json`; OpenAI chat `content`, `refusal`, `arguments`; OpenAI
Responses `delta` (as the official SDKs' stream event types name them).
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from rundir.calls import DecodeError, decode_body
from rundir.jsonlines import split_lines

# Magic numbers of the encodings a vendor or an engine's store may have compressed with.
_MAGIC = {b"\x1f\x8b": "gzip", b"\x28\xb5\x2f\xfd": "zstd"}
_DELTA_KEYS = frozenset(
    {"text", "thinking", "partial_json", "content", "refusal", "arguments", "delta"}
)


def body_texts(body: bytes) -> list[str]:
    """Texts to search in a request or response body (see the module's doc)."""
    raw = _decompressed(body)
    text = raw.decode("utf-8", errors="replace")
    texts = [text]
    parsed = _json(text)
    if parsed is not None:
        texts.append("\n".join(_strings(parsed)))
    events = [_json(line[5:].strip()) for line in split_lines(text) if line.startswith("data:")]
    if events:
        texts.append("".join(d for event in events if event is not None for d in _deltas(event)))
    return texts


def file_texts(data: bytes) -> list[str]:
    """Texts to search in a store file: the same forms, plus each JSONL line's strings."""
    texts = body_texts(data)
    lines = [_json(line) for line in split_lines(texts[0])]
    texts += ["\n".join(_strings(row)) for row in lines if row is not None]
    return texts


def _decompressed(data: bytes) -> bytes:
    for magic, encoding in _MAGIC.items():
        if data.startswith(magic):
            try:
                return decode_body(encoding, data)
            except DecodeError:
                return data  # not really compressed: searched as it is
    return data


def _json(text: str) -> object | None:
    if not text or text[0] not in '[{"':
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, inner in value.items():
            yield str(key)
            yield from _strings(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _strings(inner)


def _deltas(value: object) -> Iterator[str]:
    if isinstance(value, dict):
        for key, inner in value.items():
            if key in _DELTA_KEYS and isinstance(inner, str):
                yield inner
            else:
                yield from _deltas(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _deltas(inner)
