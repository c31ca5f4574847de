"""Output protocols a prompt asks for: dspy fields, XML tags, markdown, text replies.

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

from stubs.formats.output_limit import cut_to_tokens
from stubs.formats.text_reply import json_object_reply, text_reply

__all__ = [
    "cut_to_tokens",
    "json_object_reply",
    "text_reply",
]
