from __future__ import annotations

import rfc8785
from hypothesis import given, settings

from rundir.calls.masking import _tag_big_ints, canonical_json, mask_body, request_hash
from tests.json_values import ANY_JSON


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


# --- the canonical JSON of the hash: RFC 8785's bytes, big integers tagged ----------------------


def _reference(value: object) -> bytes:
    """What the hash was before the shortcut: RFC 8785, big integers tagged."""
    try:
        return rfc8785.dumps(value)  # type: ignore[arg-type]
    except rfc8785.IntegerDomainError:
        return rfc8785.dumps(_tag_big_ints(value))


@settings(max_examples=400, deadline=None)
@given(ANY_JSON)
def test_canonical_json_writes_rfc8785_bytes_for_every_json_value(value: object) -> None:
    # Astral and private-use keys, control characters, integers past 2**53, floats: every
    # recorded request hash stays what it was.
    assert canonical_json(value) == _reference(value)
