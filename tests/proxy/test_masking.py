from __future__ import annotations

from rundir.masking import mask_body, request_hash


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
