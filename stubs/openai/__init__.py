"""Record mode's OpenAI Chat Completions and Responses APIs: replies, streams, tools (the
request checks are in vendors.requests).

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

from stubs.openai.chat import chat_completions

__all__ = [
    "chat_completions",
]
