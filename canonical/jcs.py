"""RFC 8785 canonical JSON, through the C JSON encoder wherever it writes the same bytes.

The `rfc8785` package is the reference and is pure Python: about 0.15 ms for one ledger entry of
a dozen settlements, written twice per entry (its hash, then its line) by the ledger's writer
thread while it holds the GIL, and 42 us of a small chat request's hash on the proxy's loop.

RFC 8785 and `json.dumps(sort_keys=True, ensure_ascii=False)` write the same bytes for a value
of dicts with ASCII keys, lists, strings, booleans, null and integers within RFC 8785's domain:
the same string escapes (both escape only `"`, `\\` and U+0000-U+001F, with the same short forms
and lowercase `\\u00xx`), keys sorted alike (UTF-16 and code-point order agree on ASCII),
integers in decimal. They differ on floats (ECMAScript's number format) and may on non-ASCII keys
(UTF-16 order is not code-point order past U+E000), so a value holding either, or any other
type, takes the reference, as does a lone surrogate (which the reference refuses).
"""

from __future__ import annotations

import json
from typing import Any

import rfc8785

# RFC 8785 reads numbers as IEEE doubles: past 2**53 an integer is refused (IntegerDomainError).
_SAFE_INT = 2**53 - 1
_SCALARS = (str, bool, type(None))
# `json.dumps` with these options builds an encoder per call (every live call's hash asks).
_SORTED = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _json_compatible(value: Any) -> bool:
    """Whether `json.dumps` writes `value` exactly as RFC 8785 does. Never recurses."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict:
            for key in item:
                if type(key) is not str or not key.isascii():
                    return False
            stack.extend(item.values())
        elif kind is list:
            stack.extend(item)
        elif kind is int:
            if not -_SAFE_INT <= item <= _SAFE_INT:
                return False
        elif kind not in _SCALARS:
            return False  # a float, a tuple, a subclass: the reference decides
    return True


def dumps(value: Any) -> bytes:
    """The RFC 8785 canonical JSON of `value`; raises `rfc8785.CanonicalizationError` (an
    integer past 2**53 as its `IntegerDomainError`) where the reference does."""
    if _json_compatible(value):
        try:
            text = _SORTED.encode(value)
            return text.encode("utf-8")
        except UnicodeEncodeError:
            pass  # a lone surrogate: the reference raises its own error for it
    return rfc8785.dumps(value)
