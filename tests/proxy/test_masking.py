from __future__ import annotations

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from rundir.masking import _tag_big_ints, canonical_json, mask_body, request_hash


def test_mask_removes_nested_and_wildcard_paths_without_touching_the_original() -> None:
    body = {
        "metadata": {"user_id": "u1", "keep": 1},
        "messages": [{"id": "a", "content": "x"}, {"id": "b", "content": "y"}],
    }
    masked = mask_body(body, ["metadata.user_id", "messages.*.id"])
    assert masked == {"metadata": {"keep": 1}, "messages": [{"content": "x"}, {"content": "y"}]}
    assert body["metadata"] == {"user_id": "u1", "keep": 1}


def test_hash_ignores_key_order_and_masked_fields_but_not_content() -> None:
    a = request_hash("POST", "r", {"a": 1, "b": [1, 2], "user": "x"}, b"", ["user"])
    b = request_hash("POST", "r", {"b": [1, 2], "a": 1, "user": "y"}, b"", ["user"])
    c = request_hash("POST", "r", {"b": [1, 2], "a": 2}, b"", ["user"])
    assert a == b != c
    assert request_hash("POST", "other", {"a": 1}, b"", []) != request_hash(
        "POST", "r", {"a": 1}, b"", []
    )


def test_non_json_bodies_hash_their_bytes() -> None:
    assert request_hash("POST", "r", None, b"{bad", []) != request_hash(
        "POST", "r", None, b"{bad2", []
    )


# --- the canonical JSON of the hash: the C encoder's shortcut writes RFC 8785's own bytes ------

_TEXT = st.text(st.characters(exclude_categories=["Cs"]))  # every character but a surrogate
_KEYS = st.one_of(st.text(st.characters(codec="ascii")), _TEXT)
_NO_FLOATS = st.none() | st.booleans() | st.integers(min_value=-(2**64), max_value=2**64) | _TEXT


def _json(leaves: st.SearchStrategy[object]) -> st.SearchStrategy[object]:
    return st.recursive(
        leaves,
        lambda inner: st.lists(inner, max_size=5) | st.dictionaries(_KEYS, inner, max_size=5),
        max_leaves=30,
    )


def _reference(value: object) -> bytes:
    """What the hash was before the shortcut: RFC 8785, big integers tagged."""
    try:
        return rfc8785.dumps(value)  # type: ignore[arg-type]
    except rfc8785.IntegerDomainError:
        return rfc8785.dumps(_tag_big_ints(value))


@settings(max_examples=400, deadline=None)
@given(_json(_NO_FLOATS) | _json(_NO_FLOATS | st.floats(allow_nan=False, allow_infinity=False)))
def test_canonical_json_writes_rfc8785_bytes_for_every_json_value(value: object) -> None:
    # Astral and private-use keys, control characters, integers past 2**53, floats: every
    # recorded request hash stays what it was.
    assert canonical_json(value) == _reference(value)


def test_canonical_json_keeps_utf16_key_order_and_ecmascript_numbers() -> None:
    # The two places where json.dumps and RFC 8785 part ways: they must take RFC 8785's side.
    # U+1F600 sorts before U+FB01 in UTF-16 (a surrogate pair, 0xD83D...), after it by code point.
    assert canonical_json({"\ufb01": 2, "\U0001f600": 1}) == '{"\U0001f600":1,"\ufb01":2}'.encode()
    assert canonical_json({"x": 1.0, "y": 1e-7, "z": 1e21}) == b'{"x":1,"y":1e-7,"z":1e+21}'


def test_canonical_json_refuses_a_lone_surrogate_as_before() -> None:
    with pytest.raises(rfc8785.CanonicalizationError):
        canonical_json({"text": "\ud800"})
