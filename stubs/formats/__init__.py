"""Output protocols a prompt asks for: dspy fields, XML tags, markdown, text replies.

Submodules are imported where used (not here), so loading one does not load the others."""

from stubs.formats.output_limit import cut_to_tokens
from stubs.formats.text_reply import json_object_reply, text_reply

__all__ = [
    "cut_to_tokens",
    "json_object_reply",
    "text_reply",
]
