"""stubs.schema_numbers: numbers in bounds, on multiples validators accept, or from the text."""

from __future__ import annotations

import math

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from stubs.schema_numbers import number_for
from stubs.schema_support import Unsat


def first(n: int) -> int:
    return 0


@given(
    lo=st.integers(-1000, 1000),
    width=st.integers(2, 1000),
    step=st.sampled_from([None, 0.1, 0.25, 3, 7]),
    integer=st.booleans(),
    exclusive=st.booleans(),
    at=st.integers(0, 10**6),
)
def test_numbers_validate_against_their_schema(
    lo: int, width: int, step: float | None, integer: bool, exclusive: bool, at: int
) -> None:
    schema: dict[str, object] = {"type": "integer" if integer else "number"}
    schema["exclusiveMinimum" if exclusive else "minimum"] = lo
    schema["maximum"] = lo + width * 10
    if step is not None:
        schema["multipleOf"] = step
    value = number_for(schema, integer, lambda n: at % n, [])
    jsonschema.validate(value, schema)


def test_a_grounded_integer_is_taken_when_in_range_and_skipped_on_an_open_bound() -> None:
    assert number_for({"minimum": 0, "maximum": 10}, True, first, [42, 7]) == 7
    assert number_for({"exclusiveMinimum": 3}, True, first, [3, 4]) == 4
    # Floats never take grounded integers.
    assert number_for({"minimum": 0, "maximum": 10}, False, first, [7]) != 7


def test_a_fractional_multiple_of_an_integer_uses_the_smallest_integer_multiple() -> None:
    assert number_for({"multipleOf": 1.5, "minimum": 1}, True, first, []) == 3


def test_empty_ranges_are_unsatisfiable() -> None:
    for schema in (
        {"minimum": 5, "maximum": 4},
        {"exclusiveMinimum": 5, "maximum": 5},
        {"multipleOf": 10, "minimum": 1, "maximum": 9},
    ):
        with pytest.raises(Unsat):
            number_for(schema, True, first, [])


def test_an_unbounded_float_is_a_finite_float() -> None:
    value = number_for({"type": "number"}, False, lambda n: n // 2, [])
    assert isinstance(value, float) and math.isfinite(value)
