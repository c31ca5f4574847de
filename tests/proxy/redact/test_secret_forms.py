"""proxy.redact.secret_forms: which bodies need the slow per-character search (an escape of an
ASCII character, or one cut off at the end), and the base64 text that encodes a key whatever
bytes come before it."""

from __future__ import annotations

import base64
import re

import pytest

from proxy.redact.secret_forms import base64_forms, char_forms, has_escape
from tests.proxy.redact.study_keys import OAI, VOY


@pytest.mark.parametrize(
    "data",
    [b'{"k":"sk\\u002dx"}', b"sk%2Dproj", b"a\\/b", b"ends in a cut escape \\u00", b"ends in %4"],
)
def test_an_ascii_escape_whole_or_cut_off_needs_the_slow_search(data: bytes) -> None:
    assert has_escape(data)


@pytest.mark.parametrize(
    "data", [b"plain text", b'{"text":"it\\u2019s"} and more', b"caf%C3%A9 and then more"]
)
def test_escapes_no_key_character_can_take_leave_the_fast_search(data: bytes) -> None:
    assert not has_escape(data)


@pytest.mark.parametrize("before", [b"", b"u", b"us", b"user:"])
def test_a_keys_base64_is_found_whatever_comes_before_it(before: bytes) -> None:
    forms = base64_forms(VOY)
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        encoded = encode(before + VOY.encode() + b"\n").decode()
        assert any(form in encoded for form in forms), encoded


def test_each_character_matches_literal_unicode_escaped_and_percent_encoded() -> None:
    pattern = re.compile(b"".join(char_forms(c) for c in OAI[:6]))
    for written in (b"sk-pro", b"\\u0073k%2D\\u0070ro", b"%73%6B-%70%72%6F"):
        assert pattern.fullmatch(written), written
    assert pattern.fullmatch(b"SK-PRO") is None
    assert re.fullmatch(char_forms("/"), b"\\/")
