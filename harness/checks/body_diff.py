"""A readable diff of two masked request bodies, for the gate and the replay comparison.

Two hashes that differ say nothing a reader can act on; the JSON paths that differ say where,
not how. This renders both bodies as canonical JSON (keys sorted, two-space indent), so that a
key order the SDK chose never shows up as a change, and gives a unified diff (stdlib difflib) of
the two renderings, headed by the arm, item, turn and call it belongs to.

Prompts are long strings on one JSON line: a diff of the whole line would show two screens of
text to point at a changed date. A string longer than LONG in either body is therefore cut to
the window around its first difference from the other body's string at the same path (or to its
opening when the two agree), with the cut marked and the full length given. The whole diff is
capped at MAX_LINES lines of at most MAX_LINE characters.
"""

from __future__ import annotations

import difflib
import json
from typing import Any

from rundir.calls import CallRecord, PackReader, mask_body

LONG = 200  # a string longer than this is shown as a window
BEFORE = 60  # characters kept before a string's first difference
WINDOW = 160  # characters kept from there on
MAX_LINES = 60
MAX_LINE = 400
DIFF_LINES_SHOWN = 24  # body diff lines a command prints per divergence
MISSING = object()


def body_diff(first: Any, second: Any, first_name: str, second_name: str) -> str:
    """A unified diff of two JSON values (MISSING for a side with no such request), capped;
    '' when their canonical renderings agree."""
    left, right = _shorten(first, second), _shorten(second, first)
    diff = list(
        difflib.unified_diff(
            _render(left), _render(right), first_name, second_name, n=2, lineterm=""
        )
    )
    if len(diff) > MAX_LINES:
        diff = [*diff[:MAX_LINES], f"... ({len(diff) - MAX_LINES} more diff lines)"]
    return "\n".join(line if len(line) <= MAX_LINE else line[:MAX_LINE] + "..." for line in diff)


def _render(value: Any) -> list[str]:
    if value is MISSING:
        return []  # no such request: every line of the other side is an addition
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False).splitlines()


def _shorten(value: Any, other: Any) -> Any:
    """`value` with its long strings cut around where they first differ from `other`'s."""
    if isinstance(value, dict):
        peer = other if isinstance(other, dict) else {}
        return {k: _shorten(v, peer.get(k, MISSING)) for k, v in value.items()}
    if isinstance(value, list):
        peers = other if isinstance(other, list) else []
        return [_shorten(v, peers[i] if i < len(peers) else MISSING) for i, v in enumerate(value)]
    if isinstance(value, str) and len(value) > LONG:
        return window(value, other if isinstance(other, str) else None)
    return value


def window(text: str, other: str | None) -> str:
    """`text` around its first difference from `other` (its opening if they agree or `other`
    is not a string), with what was cut marked."""
    start = 0 if other is None or other == text else first_difference(text, other)
    lo = max(0, start - BEFORE)
    hi = min(len(text), lo + WINDOW)
    head = f"[{lo} chars]..." if lo else ""
    tail = f"...[{len(text) - hi} more chars]" if hi < len(text) else ""
    where = f" (of {len(text)}; first difference at {start})" if other not in (None, text) else ""
    return f"{head}{text[lo:hi]}{tail}{where}"


def first_difference(a: str, b: str) -> int:
    """The index of the first character where two strings differ (the shorter's length when
    one is the other's prefix)."""
    return next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )


def compared_view(call: CallRecord, body: Any, masks: list[str]) -> dict[str, Any]:
    """What a comparison sees of a call, and so what its diff shows: method, route, masked body."""
    return {"method": call.method, "route": call.route, "body": mask_body(body, masks)}


def request_body(pack: PackReader, call: CallRecord) -> Any:
    """The call's JSON request body from the run's pack (its text when it is not JSON, None
    when it had none); raises KeyError or ValueError on a damaged pack."""
    if call.request_body is None:
        return None
    raw = pack.get(call.request_body)
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", errors="replace")


def diff_block(diff: str, shown: int = DIFF_LINES_SHOWN) -> list[str]:
    """A divergence's body diff as indented lines under its heading, at most `shown` of them
    (the JSON record has the whole capped diff)."""
    lines = diff.splitlines()
    out = [f"    {line}" for line in lines[:shown]]
    if len(lines) > shown:
        out.append(f"    ... {len(lines) - shown} more line(s) in the JSON record")
    return out
