"""Record mode's OpenAI Chat Completions and Responses APIs: replies, streams, tools (the
request checks are in vendors.requests).

Submodules are imported where used (not here), so loading one does not load the others."""

__all__ = [
    "chat",
    "chat_wire",
    "common",
    "responses",
    "responses_stream",
    "tools",
]
