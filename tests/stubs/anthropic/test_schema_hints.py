"""Constraints the anthropic SDK moves into descriptions are read back for generation."""

from __future__ import annotations

import pydantic
from anthropic.lib._parse._transform import transform_schema

from stubs.anthropic.schema_hints import restore_hints


class Order(pydantic.BaseModel):
    quantity: int = pydantic.Field(ge=1, le=9, description="How many")
    code: str = pydantic.Field(pattern=r"^[A-Z]{2}, [0-9]{3}$", max_length=7)
    items: list[str] = pydantic.Field(min_length=2, max_length=4)
    price: float = pydantic.Field(gt=0, multiple_of=0.5, default=1.0)


def test_sdk_hints_become_keywords_again():
    sent = transform_schema(Order.model_json_schema())
    props = sent["properties"]
    assert "maximum" not in props["quantity"]  # the SDK really does move them
    restored = restore_hints(sent)["properties"]
    assert restored["quantity"]["minimum"] == 1 and restored["quantity"]["maximum"] == 9
    assert restored["quantity"]["description"].startswith("How many")
    # A pattern holding ", " survives, and the key after it is still found.
    assert restored["code"]["pattern"] == r"^[A-Z]{2}, [0-9]{3}$"
    assert restored["code"]["maxLength"] == 7
    assert restored["items"]["minItems"] == 2 and restored["items"]["maxItems"] == 4
    # Keys the module does not restore (default) do not spoil the ones it does.
    assert restored["price"]["exclusiveMinimum"] == 0
    assert restored["price"]["multipleOf"] == 0.5
    assert "default" not in restored["price"]


def test_plain_descriptions_and_data_are_left_alone():
    schema = {
        "type": "object",
        "description": "Notes {not a hint}",
        "properties": {"kind": {"enum": [{"description": "{minimum: 3}"}]}},
    }
    assert restore_hints(schema) == schema
