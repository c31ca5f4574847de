"""Hypothesis strategies for JSON values, the hostile corners included: astral and private-use
keys, control characters, integers past 2**53 and floats."""

from __future__ import annotations

from hypothesis import strategies as st

TEXT = st.text(st.characters(exclude_categories=["Cs"]))  # every character but a surrogate
KEYS = st.one_of(st.text(st.characters(codec="ascii")), TEXT)
NO_FLOATS = st.none() | st.booleans() | st.integers(min_value=-(2**64), max_value=2**64) | TEXT


def json_values(leaves: st.SearchStrategy[object]) -> st.SearchStrategy[object]:
    return st.recursive(
        leaves,
        lambda inner: st.lists(inner, max_size=5) | st.dictionaries(KEYS, inner, max_size=5),
        max_leaves=30,
    )


# Any JSON value, with or without floats among its leaves.
ANY_JSON = json_values(NO_FLOATS) | json_values(
    NO_FLOATS | st.floats(allow_nan=False, allow_infinity=False)
)
