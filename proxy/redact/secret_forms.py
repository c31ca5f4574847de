"""How a secret may be written, and the searches that find it: each character literal, as a JSON
`\\uXXXX` escape (`\\/` for a slash) or as URL percent-encoding, mixed freely; its base64 forms;
and, for a body that arrives in pieces, a tail that could still grow into one.

A body with no escape of an ASCII character is searched for the literal keys with `bytes.find`
(`Literals`); one with such escapes with the per-character patterns (`patterns`).
"""

from __future__ import annotations

import base64
import re

# The start of an escape whose end has not arrived yet: held back, it may begin a secret.
_PARTIAL_ESCAPE = rb"(?:\\(?:u[0-9a-fA-F]{0,3})?|%[0-9a-fA-F]?)?"
# Escapes of ASCII, the only characters a secret has: "\u2019" (a vendor's
# apostrophe) or "%C3" cannot be part of one, so they do not send a body to the slow patterns.
_ASCII_UNICODE = re.compile(rb"\\u00[0-7][0-9a-fA-F]")
_ASCII_PERCENT = re.compile(rb"%[0-7][0-9a-fA-F]")


def has_escape(data: bytes) -> bool:
    """Whether `data` holds an escape a secret's character could be written with (whole, or
    cut off at its end). Plain `in` tests first: this runs on every chunk."""
    if b"\\/" in data:
        return True
    if b"\\u00" in data and _ASCII_UNICODE.search(data):
        return True
    if b"%" in data and _ASCII_PERCENT.search(data):
        return True
    tail = data[-6:]
    return b"\\" in tail or b"%" in tail


def _hex(value: int, width: int) -> bytes:
    """A case-insensitive regex for `value` in hex (vendors write \\u00e9 and \\u00E9 alike)."""
    out = b""
    for digit in f"{value:0{width}x}":
        out += f"[{digit}{digit.upper()}]".encode() if digit.isalpha() else digit.encode()
    return out


def char_forms(char: str, escaped: bool = True) -> bytes:
    """Every way one character of a secret may be written: literal, JSON \\u escape, %XX."""
    code = ord(char)
    forms = [re.escape(char.encode())]
    if escaped:
        forms += [rb"\\u" + _hex(code, 4), b"%" + _hex(code, 2)]
    if char == "/":
        forms.append(rb"\\/")
    return b"(?:" + b"|".join(forms) + b")"


def base64_forms(secret: str) -> list[str]:
    """The part of any base64 text that encodes `secret`, for each of its 3 alignments and
    both alphabets: the characters that depend on the secret's bytes alone."""
    out = []
    for align in range(3):
        data = b"\0" * align + secret.encode()
        first, last = -(-8 * align // 6), 8 * len(data) // 6
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            out.append(encode(data)[first:last].decode())
    return out


def max_form_length(secret: str) -> int:
    return sum(6 for _ in secret)  # the longest form of any ASCII character is \uXXXX


#: Up to this many bytes, one regex finds a literal secret faster than an `in` per secret.
_REGEX_UP_TO = 600


class Literals:
    """Literal secrets searched with bytes.find: occurrences, and a tail that could start one."""

    def __init__(self, entries: list[tuple[bytes, int]]) -> None:
        self.entries = entries
        # A tail that is a proper prefix of some secret (one byte short of it at most): one
        # compiled pattern of nested prefixes, `a(?:b(?:c)?)?`, anchored at the end. The regex
        # engine tries every start in C; a loop over the secrets with bytes.find cost ~20 us
        # per chunk in Python (profiled: the largest part of a stream's per-event work).
        prefixes = [
            _nested_prefix([re.escape(e[i : i + 1]) for i in range(len(e) - 1)])
            for e, _ in entries
            if len(e) > 1
        ]
        self.longest = max((len(e) for e, _ in entries), default=0)
        self.tail = re.compile(b"(?:" + b"|".join(prefixes) + rb")\Z") if prefixes else None
        # One search in C for any of them: a loop of `in` tests costs 2 us a call, and the
        # stream tap asks this of every text delta. On long data the regex, which tries every
        # alternative at each position, is the slower (46 us against 14 on a 10 KB chunk).
        literals = b"|".join(re.escape(e) for e, _ in entries)
        self._any = re.compile(literals) if entries else None
        self._secrets = [e for e, _ in entries]

    def found_in(self, data: bytes) -> bool:
        if len(data) > _REGEX_UP_TO:
            return any(secret in data for secret in self._secrets)
        return self._any is not None and self._any.search(data) is not None

    def matches(self, data: bytes) -> list[tuple[int, int, int]]:
        found = []
        for entry, index in self.entries:
            at = data.find(entry)
            while at >= 0:
                found.append((at, at + len(entry), index))
                at = data.find(entry, at + 1)
        return found

    def held_from(self, data: bytes, lowest: int) -> int:
        if self.tail is None:
            return len(data)
        # The earliest start whose rest is a prefix: the leftmost match of the pattern.
        held = self.tail.search(data, max(lowest, len(data) - self.longest + 1))
        return held.start() if held is not None else len(data)


def patterns(forms: list[list[bytes]]) -> tuple[re.Pattern[bytes], re.Pattern[bytes]]:
    """A finder of every occurrence (one group per secret) and a finder of a tail that could
    still grow into one."""
    groups = b"|".join(b"(" + b"".join(f) + b")" for f in forms)
    # A lookahead finds every start, so overlapping occurrences are all seen.
    find = re.compile(b"(?=(?:" + groups + b"))")
    prefixes = b"|".join(_nested_prefix(f) for f in forms)
    hold = re.compile(b"(?:" + prefixes + b"|)" + _PARTIAL_ESCAPE + rb"\Z")
    return find, hold


def _nested_prefix(forms: list[bytes]) -> bytes:
    """A regex for any prefix of the secret (one or more characters): `a(?:b(?:c)?)?`."""
    inner = b""
    for form in reversed(forms[1:]):
        inner = b"(?:" + form + inner + b")?"
    return forms[0] + inner
