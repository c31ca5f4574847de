"""Record mode's Anthropic Messages API: request checks, replies, streams, schema hints.

Submodules are imported where used (not here), so loading one does not load the others."""

__all__ = [
    "messages",
    "request",
    "schema_hints",
    "stream",
]
