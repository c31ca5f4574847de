"""stubs.schema.walker: one pass over a schema, deterministic per (digest, path)."""

from __future__ import annotations

import pytest

from stubs.schema.support import Unsat
from stubs.schema.walker import Walker

TREE = {
    "$defs": {
        "node": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "kids": {"items": {"$ref": "#/$defs/node"}}},
            "required": ["name", "kids"],
        }
    },
    "$ref": "#/$defs/node",
}


def walk(schema: object, digest: bytes = b"d", minimal: bool = False) -> object:
    return Walker(schema, digest, minimal).gen(schema, "$", 0)


def test_the_same_digest_gives_the_same_instance_and_another_may_differ() -> None:
    schema = {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(8)}}
    assert walk(schema, b"a") == walk(schema, b"a")
    assert len({repr(walk(schema, bytes([i]))) for i in range(20)}) > 1


def test_recursive_refs_end_and_minimal_builds_only_what_is_required() -> None:
    full = walk(TREE)
    assert isinstance(full, dict) and set(full) == {"name", "kids"}
    assert walk(TREE, minimal=True) == {"name": walk(TREE, minimal=True)["name"], "kids": []}  # type: ignore[index]


def test_oneof_picks_a_value_exactly_one_branch_accepts() -> None:
    schema = {"oneOf": [{"type": "integer"}, {"type": "number", "multipleOf": 1}]}
    with pytest.raises(Unsat):
        walk(schema)
    assert walk({"oneOf": [{"type": "string"}, {"type": "integer"}]}) is not None


def test_a_non_local_ref_is_unsat() -> None:
    with pytest.raises(Unsat):
        walk({"$ref": "https://example.invalid/schema.json"})
