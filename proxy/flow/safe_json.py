"""Parse a request body as the vendors' strict parsers would, refusing hostile JSON up front.

Python's `json.loads` recurses once per nesting level (a 100,000-deep body is a RecursionError),
turns a 5,000-digit integer into a ValueError (the int string-conversion limit), reads `1e400` as
infinity and accepts `NaN`, lone UTF-16 surrogates and duplicate keys. The hash (RFC 8785) and
the metering fail on one or another of these, and the vendors refuse them anyway, so each is
refused here with a one-line reason the caller sends back as the vendor's 400.
Depth is checked on the raw text BEFORE `json.loads` runs.
"""

from __future__ import annotations

import json
import math
import re
from itertools import accumulate
from typing import Any

# Deep enough for any real request (JSON schemas of tools nest a few dozen levels at most), far
# below what the recursive code on the request path (json, copy, rfc8785) can take.
MAX_DEPTH = 128
# Integers past 64 bits fit no vendor field (OpenAI's `seed` is an int64); 20 digits holds them all.
MAX_INT_DIGITS = 20

# A JSON string, or an unterminated one running to the end: matching the unterminated case keeps
# the scan linear (otherwise every later quote would start a new failing scan).
_STRING = re.compile(r'"(?:[^"\\]|\\.)*+(?:"|\\?\Z)', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
# Raw UTF-8 holds no surrogate; one can only come from a `\uD800`-`\uDFFF` escape. A text without
# anything like one (an escaped backslash before "ud8" only makes this match more, never less)
# skips the check that serialises the whole value again.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


class HostileJSON(ValueError):
    """A body the harness refuses to parse; the message says why, for the vendor's 400."""


def nesting_depth(text: str) -> int:
    """The deepest bracket nesting of `text`, ignoring brackets inside strings. Never recurses."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    if not brackets:
        return 0
    return max(0, max(accumulate(map(_STEP.__getitem__, brackets))))


def _int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_INT_DIGITS:
        raise HostileJSON(
            f"The request body has an integer of {len(digits.lstrip('-'))} digits; "
            f"at most {MAX_INT_DIGITS} are accepted."
        )
    return int(digits)


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise HostileJSON(f"The request body has the number {text[:40]}, which is out of range.")
    return value


def _constant(name: str) -> Any:
    raise HostileJSON(f"The request body has {name}, which is not valid JSON.")


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        # Parsers disagree on which duplicate wins; the proxy must meter what the vendor reads.
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                break
            seen.add(key)
        raise HostileJSON(f"The request body has the key {json.dumps(key)[:80]} more than once.")
    return result


# Built once: `json.loads` with hooks builds a decoder (and its scanner) on every call.
_DECODER = json.JSONDecoder(
    parse_int=_int, parse_float=_float, parse_constant=_constant, object_pairs_hook=_object
)


def parse_body(raw: bytes) -> Any:
    """The JSON value of `raw`; raises HostileJSON (a ValueError) with a one-line reason."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise HostileJSON(f"The request body is not valid UTF-8 (byte {e.start}).") from e
    # The depth is at most the number of opening brackets (those inside strings included), so a
    # body with few of them, the common case, needs no scan.
    if text.count("{") + text.count("[") > MAX_DEPTH and (depth := nesting_depth(text)) > MAX_DEPTH:
        raise HostileJSON(
            f"The request body nests {depth} levels deep; at most {MAX_DEPTH} are accepted."
        )
    try:
        if text.startswith("\ufeff"):  # as json.loads refuses it
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
        value = _DECODER.decode(text)
    except json.JSONDecodeError as e:
        raise HostileJSON(f"The request body is not valid JSON: {e}") from e
    try:
        # A `\ud800` escape decodes to a lone surrogate, which no UTF-8 encoder (the hash, the
        # call log, the vendor's own parser) accepts. Depth is bounded, so this cannot recurse far.
        if _SURROGATE_ESCAPE.search(text):
            json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as e:
        raise HostileJSON(
            "The request body has a lone UTF-16 surrogate escape (such as \\ud800): "
            "not valid Unicode."
        ) from e
    return value
