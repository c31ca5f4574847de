"""proxy.flow.safe_json: the strict parse that refuses hostile JSON with a one-line reason."""

from __future__ import annotations

import pytest

from proxy.flow.safe_json import MAX_DEPTH, HostileJSON, nesting_depth, parse_body


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        (b'{"a": NaN}', "NaN"),
        (b'{"a": -Infinity}', "-Infinity"),
        (b'{"a": 1e999}', "out of range"),
        (b'{"a": 1, "a": 2}', 'key "a" more than once'),
        (b'{"a": "\xff"}', "not valid UTF-8"),
        (b'{"a": "\\udc00"}', "surrogate"),
        (b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1), f"at most {MAX_DEPTH}"),
        (b'{"a": ' + b"1" * 21 + b"}", "21 digits"),
        (b"{not json", "not valid JSON"),
    ],
)
def test_parse_body_refuses_hostile_json_with_a_reason(raw: bytes, says: str) -> None:
    with pytest.raises(HostileJSON) as e:
        parse_body(raw)
    assert says in str(e.value)
    assert "\n" not in str(e.value)


def test_parse_body_accepts_the_edges_of_sane_json() -> None:
    deepest = b"[" * MAX_DEPTH + b"]" * MAX_DEPTH
    assert nesting_depth(deepest.decode()) == MAX_DEPTH
    assert isinstance(parse_body(deepest), list)
    # A surrogate pair is one valid character; brackets inside strings do not nest.
    assert parse_body(b'{"a": "\\ud83d\\ude00 [[[{{{"}') == {"a": "\U0001f600 [[[{{{"}
    assert parse_body(b'{"seed": -9223372036854775808}') == {"seed": -(2**63)}
    assert parse_body(b'{"t": 1e-400, "u": 0.5}') == {"t": 0.0, "u": 0.5}


def test_depth_scan_is_linear_on_unterminated_strings() -> None:
    # Escaped quotes and a trailing backslash: a naive string regex rescans from every quote.
    raw = b'"' + b'\\"' * 400_000 + b"\\"
    with pytest.raises(HostileJSON, match="not valid JSON"):
        parse_body(raw)
