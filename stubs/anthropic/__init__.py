"""Record mode's Anthropic Messages API: replies, streams, schema hints.

Submodules are imported where used (not here), so loading one does not load the others."""

__all__ = [
    "messages",
    "schema_hints",
    "stream",
]
