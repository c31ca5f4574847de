"""stubs.schema.support: cached validators, pattern strings and the allOf merge."""

from __future__ import annotations

import re

import pytest

from stubs.schema.support import Unsat, merged_allof, pattern_string, validator
from vendors.errors import VendorRequestError


def test_a_validator_is_cached_per_schema_and_checks_formats() -> None:
    key = '{"format":"date","type":"string"}'
    assert validator(key) is validator(key)
    assert validator(key).is_valid("2024-05-01")
    assert not validator(key).is_valid("May 1st")


def test_an_invalid_schema_is_the_vendors_400() -> None:
    with pytest.raises(VendorRequestError) as raised:
        validator('{"type":"no-such-type"}')
    assert raised.value.status == 400 and "invalid schema" in str(raised.value)


@pytest.mark.parametrize("pattern", [r"^[a-z]{3}-\d{2}$", r"^(a|bc)+$", r"^\w{3,5}$"])
def test_pattern_strings_match_within_their_lengths(pattern: str) -> None:
    text = pattern_string(pattern, b"digest", 3, 12)
    assert re.fullmatch(pattern, text) and 3 <= len(text) <= 12
    assert pattern_string(pattern, b"digest", 3, 12) == text


def test_an_impossible_pattern_is_unsat() -> None:
    with pytest.raises(Unsat):
        pattern_string(r"^(?=x)y$", b"digest", 0, 5)


def test_allof_branches_are_merged() -> None:
    key = '[{"type":"integer","minimum":2},{"maximum":5,"type":"integer"}]'
    assert merged_allof(key) == {"type": "integer", "minimum": 2, "maximum": 5}
