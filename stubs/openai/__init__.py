"""Record mode's OpenAI Chat Completions and Responses APIs: request checks, replies, streams,
tools.

Submodules are imported where used (not here), so loading one does not load the others."""

__all__ = [
    "chat",
    "chat_request",
    "chat_wire",
    "common",
    "options",
    "responses",
    "responses_request",
    "responses_stream",
    "tools",
]
