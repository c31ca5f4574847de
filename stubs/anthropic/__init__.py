"""Record mode's Anthropic Messages API: replies, streams, schema hints.

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

__all__ = [
    "messages",
    "schema_hints",
    "stream",
]
