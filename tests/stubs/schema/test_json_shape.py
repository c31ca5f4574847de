"""stubs.schema.json_shape: the object shape a prompt describes, read as a JSON schema."""

from __future__ import annotations

import json

from stubs.schema.json_shape import described_schema

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def test_a_schema_in_the_prompt_is_taken_as_written() -> None:
    prompt = f"Answer in json matching:\n{json.dumps(SCHEMA, indent=2)}\nNo prose."
    assert described_schema(prompt) == SCHEMA
    # A schema wins over an example before it; a schema of a non-object is not an object's.
    assert described_schema('e.g. {"a": 1} then ' + json.dumps(SCHEMA)) == SCHEMA
    assert described_schema('{"type": "array", "properties": {"a": {}}}') is None


def test_an_example_object_gives_its_values_types() -> None:
    schema = described_schema(
        'Return: {"name": "...", "age": 0, "score": 0.5, "ok": true, "tags": ["x"], '
        '"where": {"city": "..."}, "note": null, "confidence": confidence_score}'
    )
    assert schema is not None
    props = schema["properties"]
    assert [props[k]["type"] for k in ("name", "age", "score", "ok", "tags", "where")] == [
        "string",
        "integer",
        "number",
        "boolean",
        "array",
        "object",
    ]
    assert props["note"]["type"] == ["string", "null"]
    assert props["confidence"] == {"type": "string"}  # a bare placeholder, quoted
    assert schema["required"] == list(props)


def test_listed_keys_become_properties() -> None:
    schema = described_schema("Reply in JSON with the keys `name`, `age` and `hobbies`.")
    assert schema == {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "age": {"type": "integer"},
            "hobbies": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["name", "age", "hobbies"],
    }
    assert described_schema("Just answer the question, in json.") is None
