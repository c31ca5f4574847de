"""Readable strings matching a regular expression, chosen deterministically from a digest.

Why not a library: rstr's xeger draws negated classes from a `set` (order depends on
PYTHONHASHSEED, so not reproducible across processes) and repeats `*`/`+` up to 100 times;
hypothesis's `from_regex` is thorough but `find()` cannot run inside another hypothesis test
(nested-given health check) and costs 10-90 ms. So common syntax is walked here with Python's
own regex parser, and schema_instance falls back to hypothesis for what this refuses
(lookarounds, conditionals). Every result is checked with `re.search` before it is returned.
"""

from __future__ import annotations

import hashlib
import re
import re._parser as sre_parse  # the parser `re` itself uses (Python 3.11+)
import string
from typing import Any

_WORD = string.ascii_lowercase + string.ascii_uppercase + string.digits + "_"
_CATEGORIES = {
    "CATEGORY_DIGIT": string.digits,
    "CATEGORY_WORD": _WORD,
    "CATEGORY_SPACE": " ",
    "CATEGORY_NOT_DIGIT": string.ascii_lowercase,
    "CATEGORY_NOT_WORD": "-.,: ",
    "CATEGORY_NOT_SPACE": string.ascii_lowercase + string.digits,
}
# Characters a negated class or `.` may use, in a fixed order (readable ones first).
_PRINTABLE = string.ascii_lowercase + string.digits + string.ascii_uppercase + "-_.,:;!@#/ "
# Extra repeats allowed beyond a quantifier's minimum on the first tries: small, for readability.
_EXTRA_REPEATS = (2, 0, 4)
_MAX_EXTRA = 4096
# Lookarounds are skipped while generating and only checked by `re.search`, so a pattern like
# `^(?=.*\d)\w{8,}$` needs a few tries.
_TRIES = 12


class Unsupported(Exception):
    """The pattern uses syntax this walker does not generate for (lookarounds, ...)."""


def regex_example(pattern: str, digest: bytes, min_len: int = 0, max_len: int = 10**6) -> str:
    """A string `s` with `re.search(pattern, s)` and min_len <= len(s) <= max_len."""
    try:
        parsed = sre_parse.parse(pattern)
        compiled = re.compile(pattern)
    except re.error as exc:
        raise Unsupported(f"invalid pattern: {exc}") from exc

    def fits(text: str) -> bool:
        return min_len <= len(text) <= max_len and compiled.search(text) is not None

    for attempt in range(_TRIES):
        extra = _EXTRA_REPEATS[attempt % len(_EXTRA_REPEATS)]
        text = _Walker(digest + bytes([attempt]), extra).build(parsed)
        if fits(text):
            return text
    # A length window (minLength/maxLength) the short tries missed: every quantifier repeats
    # exactly `extra` more times, and `extra` is bisected until the length falls inside.
    low, high = 0, _MAX_EXTRA
    while low <= high:
        extra = (low + high) // 2
        text = _Walker(digest, extra, fixed=True).build(parsed)
        if fits(text):
            return text
        if len(text) < min_len:
            low = extra + 1
        else:
            high = extra - 1
    raise Unsupported(f"no string of length {min_len}..{max_len} found for {pattern!r}")


class _Walker:
    def __init__(self, digest: bytes, extra: int, fixed: bool = False) -> None:
        self.digest = digest
        self.extra = extra
        self.fixed = fixed
        self.counter = 0
        self.groups: dict[int, str] = {}

    def pick(self, n: int) -> int:
        self.counter += 1
        h = hashlib.blake2b(self.digest + self.counter.to_bytes(4, "big"), digest_size=8)
        return int.from_bytes(h.digest(), "big") % n

    def build(self, parsed: Any) -> str:
        return "".join(self.node(op, av) for op, av in parsed)

    def node(self, op: Any, av: Any) -> str:
        name = str(op)
        if name == "LITERAL":
            return chr(av)
        if name == "NOT_LITERAL":
            return next(c for c in _PRINTABLE if ord(c) != av)
        if name == "ANY":
            return _PRINTABLE[self.pick(26)]
        if name == "IN":
            return self.char_class(av)
        if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, high, sub = av
            room = min(high - low, self.extra)
            count = low + (room if self.fixed else self.pick(room + 1))
            return "".join(self.build(sub) for _ in range(count))
        if name == "SUBPATTERN":
            group, _add_flags, _del_flags, sub = av
            text = self.build(sub)
            if group is not None:
                self.groups[group] = text
            return text
        if name == "ATOMIC_GROUP":
            return self.build(av)
        if name == "BRANCH":
            alternatives = av[1]
            return self.build(alternatives[self.pick(len(alternatives))])
        if name == "GROUPREF":
            return self.groups.get(av, "")
        if name in ("ASSERT", "ASSERT_NOT"):
            return ""
        if name == "AT":
            return ""  # anchors: the whole string is generated, so ^ and $ hold
        raise Unsupported(name)

    def char_class(self, items: list[Any]) -> str:
        allowed: list[str] = []
        negate = False
        for op, av in items:
            name = str(op)
            if name == "NEGATE":
                negate = True
            elif name == "LITERAL":
                allowed.append(chr(av))
            elif name == "RANGE":
                allowed.extend(chr(c) for c in range(av[0], min(av[1], av[0] + 200) + 1))
            elif name == "CATEGORY":
                allowed.extend(_CATEGORIES.get(str(av), ""))
            else:
                raise Unsupported(name)
        if negate:
            banned = set(allowed)
            allowed = [c for c in _PRINTABLE if c not in banned]
        if not allowed:
            raise Unsupported("empty character class")
        return allowed[self.pick(len(allowed))]
