"""Anthropic's prompt caching in a Messages request: the `cache_control` marks, checked as the
vendor checks them, and the cache writes they make (each breakpoint caches the prompt up to it),
which the stubs report as usage and live mode reserves."""

from __future__ import annotations

from typing import Any

from vendors.errors import VendorRequestError
from vendors.tokens import estimate_tokens, texts_of

_TTLS = ("5m", "1h")
# The vendor allows at most four cache breakpoints per request.
_MAX_CACHE_MARKS = 4


def check_cache_control(value: Any, where: str) -> None:
    if value is None:
        return
    here = f"{where}.cache_control" if where else "cache_control"
    if not isinstance(value, dict) or value.get("type") != "ephemeral":
        raise VendorRequestError(400, f"{here}.type: Input should be 'ephemeral'", "cache_control")
    if "ttl" in value and value["ttl"] not in _TTLS:
        raise VendorRequestError(400, f"{here}.ttl: Input should be '5m' or '1h'", "cache_control")


def _segments(body: dict[str, Any]) -> list[tuple[int, Any]]:
    """The prompt in cache order (tools, system, messages) as (tokens, cache_control) pieces.

    The pieces mirror `estimate_input_tokens`'s arithmetic (texts plus 3 per list item), so
    their sum is the request's input estimate and a cached prefix never exceeds it.
    """

    def tokens(value: Any) -> int:
        return sum(estimate_tokens(t) for t in texts_of(value))

    out: list[tuple[int, Any]] = []
    for tool in body.get("tools") or []:
        out.append((tokens(tool) + 3, tool.get("cache_control")))
    system = body.get("system")
    if isinstance(system, str):
        out.append((tokens(system), None))
    elif isinstance(system, list):
        out.extend((tokens(b) + 3, b.get("cache_control")) for b in system)
    for msg in body["messages"]:
        content = msg["content"]
        if isinstance(content, str):
            out.append((tokens(msg) + 3, None))
        else:
            blocks = [(tokens(b), b.get("cache_control")) for b in content]
            # The role string and the per-message overhead count too: they come first.
            out.append((tokens(msg) - sum(t for t, _ in blocks) + 3, None))
            out.extend(blocks)
    return out


def cache_writes(body: dict[str, Any], total_input: int) -> tuple[int, int]:
    """(5-minute, 1-hour) cache writes: each breakpoint caches the prompt up to it.

    A stub keeps no cache between calls, so every marked prefix is a write and never a read.
    """
    segments = _segments(body)
    marks = [i for i, (_, cc) in enumerate(segments) if cc is not None]
    top = body.get("cache_control")
    check_cache_control(top, "")
    # Top-level cache_control marks the last cacheable block: the end of the last message.
    if top is not None and segments and (not marks or marks[-1] != len(segments) - 1):
        marks.append(len(segments) - 1)
    if len(marks) > _MAX_CACHE_MARKS:
        raise VendorRequestError(
            400,
            f"A maximum of {_MAX_CACHE_MARKS} blocks with cache_control may be provided. "
            f"Found {len(marks)}.",
            "cache_control",
        )
    writes = {"5m": 0, "1h": 0}
    start = 0
    left = total_input
    for mark in marks:
        cc: dict[str, Any] = segments[mark][1] or top or {}
        span = min(sum(t for t, _ in segments[start : mark + 1]), left)
        writes[cc.get("ttl", "5m")] += span
        left -= span
        start = mark + 1
    return writes["5m"], writes["1h"]
