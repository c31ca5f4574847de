"""stubs.schema.numbers: numbers in bounds, on multiples validators accept, or from the text."""

from __future__ import annotations

import math

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from stubs.schema.numbers import number_for
from stubs.schema.support import Unsat


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
    # A number field takes the text's number too, as a float, and keeps to multipleOf.
    value = number_for({"minimum": 0, "maximum": 10}, False, first, [7])
    assert value == 7 and isinstance(value, float)
    assert number_for({"multipleOf": 2, "minimum": 0}, True, first, [3, 8]) == 8


def test_huge_bounds_give_a_value_near_zero_not_near_the_bound() -> None:
    # zod writes every int as -2**53+1..2**53-1: a model answers a small number, not -9e15.
    zod = {"type": "integer", "minimum": -9007199254740991, "maximum": 9007199254740991}
    for at in range(50):
        assert 0 <= number_for(zod, True, lambda n, at=at: at % n, []) <= 100
    assert 5 <= number_for({"minimum": 5, "maximum": 2**60}, True, first, []) <= 105
    assert -103 <= number_for({"maximum": -3, "minimum": -(2**60)}, False, first, []) <= -3
    assert number_for(zod, True, first, [34]) == 34


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
