"""Record mode's OpenAI Chat Completions and Responses APIs: replies, streams, tools (the
request checks are in vendors.requests).

Submodules are imported where used (not here), so loading one does not load the others."""

from stubs.openai.chat import chat_completions

__all__ = [
    "chat_completions",
]
