"""Output protocols a prompt asks for: dspy fields, XML tags, markdown, text replies.

Submodules are imported where used (not here), so loading one does not load the others."""

__all__ = [
    "dspy_protocol",
    "output_limit",
    "tag_protocols",
    "text_reply",
]
