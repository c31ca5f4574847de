"""Masks that are regexes inside string values: a date or a uuid an engine writes into a prompt.

mem0 2.x writes today's date into its extraction prompt ("## Current Date\\n2026-12-01"). A mask
of the whole field would hide the user's words from the hash too, so a value mask replaces only
the matching text, and the rest of the string still counts. A mask string is

    [PATH]~NAME      a named pattern (below), e.g. "~date" or "messages.*.content~uuid"
    [PATH]=~REGEX    a Python regex of the study's own, e.g. "input=~req_[0-9a-f]{16}"

PATH is the dotted path of rundir.calls.masking (`*` for every item or key), and every string at or
below it is searched; no PATH searches the whole body. Each match becomes `<masked:NAME>` (or
`<masked:re>`), so a masked request still shows where something was taken out.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

# Where a named value may start and end: not inside a longer run of letters or digits. Not
# `\b`: `_` is a word character, so `\b` finds no edge in "session_4f0c..." or "ts_1700000000",
# where engines put their ids and times (langmem's `<session_UUID>` tags).
_START = r"(?<![0-9A-Za-z])"
_END = r"(?![0-9A-Za-z])"

# Linear-time patterns (no nested quantifiers), safe on any body the proxy accepts.
NAMED_PATTERNS: dict[str, str] = {
    # An ISO 8601 date or date-time, with optional time, fraction and zone.
    "datetime": (
        r"\d{4}-\d{2}-\d{2}"
        r"(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
    ),
    "date": r"\d{4}-\d{2}-\d{2}",
    "time": _START + r"\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?" + _END,
    # A uuid with its dashes, or its 32 hex digits alone (Python's `uuid.hex`: trustcall, under
    # langmem, names each memory `<instance id=HEX ...>`), told from other hex by the version
    # digit (1-8) and the RFC 4122 variant digit (8, 9, a, b) a uuid always has there.
    "uuid": _START
    + r"(?:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
    + r"|[0-9a-fA-F]{12}[1-8][0-9a-fA-F]{3}[89abAB][0-9a-fA-F]{15})"
    + _END,
    # Unix seconds or milliseconds of this century's first half (1e9 .. 1e13).
    "unix_time": _START + r"1\d{9}(?:\d{3})?" + _END,
}


class MaskError(ValueError):
    """A value mask that cannot be used; the message names it and says what to write."""


@dataclass(frozen=True)
class ValueMask:
    path: tuple[str, ...]  # () means the whole body
    label: str
    pattern: re.Pattern[str]


def is_value_mask(mask: str) -> bool:
    return "~" in mask


@functools.lru_cache(maxsize=256)
def parse_value_mask(mask: str) -> ValueMask:
    """The mask a string names; MaskError for an unknown name or a regex that does not compile."""
    if "=~" in mask:
        path, _, regex = mask.partition("=~")
        try:
            pattern = re.compile(regex)
        except re.error as e:
            raise MaskError(f"mask {mask!r}: the regex does not compile ({e})") from e
        if pattern.match(""):
            raise MaskError(f"mask {mask!r}: the regex matches the empty string; anchor it")
        return ValueMask(_path(path), "re", pattern)
    path, _, name = mask.rpartition("~")
    if name not in NAMED_PATTERNS:
        raise MaskError(
            f"mask {mask!r}: no pattern named {name!r}; use one of {sorted(NAMED_PATTERNS)} "
            "or PATH=~REGEX"
        )
    return ValueMask(_path(path), name, re.compile(NAMED_PATTERNS[name]))


def _path(text: str) -> tuple[str, ...]:
    return tuple(text.split(".")) if text else ()


def apply_value_masks(body: Any, masks: list[ValueMask]) -> Any:
    """`body` (already a private copy) with every match replaced, in mask order."""
    for mask in masks:
        body = _at(body, list(mask.path), mask)
    return body


def _at(value: Any, parts: list[str], mask: ValueMask) -> Any:
    if not parts:
        return _everywhere(value, mask)
    head, rest = parts[0], parts[1:]
    if isinstance(value, dict):
        for key in list(value) if head == "*" else [head]:
            if key in value:
                value[key] = _at(value[key], rest, mask)
    elif isinstance(value, list) and (head == "*" or head.isdigit()):
        indices = range(len(value)) if head == "*" else [int(head)]
        for i in indices:
            if 0 <= i < len(value):
                value[i] = _at(value[i], rest, mask)
    return value


def _everywhere(value: Any, mask: ValueMask) -> Any:
    # Iterative, so a deeply nested body (bounded by proxy.flow.safe_json anyway) cannot recurse
    # here.
    if isinstance(value, str):
        return mask.pattern.sub(f"<masked:{mask.label}>", value)
    stack = [value]
    while stack:
        node = stack.pop()
        items = (
            node.items()
            if isinstance(node, dict)
            else enumerate(node)
            if isinstance(node, list)
            else ()
        )
        for key, child in list(items):
            if isinstance(child, str):
                node[key] = mask.pattern.sub(f"<masked:{mask.label}>", child)
            elif isinstance(child, dict | list):
                stack.append(child)
    return value
