"""Output protocols a prompt asks for: dspy fields, XML tags, markdown, document patches, text
replies.

Submodules are imported where used (not here), so loading one does not load the others."""

__all__ = [
    "dspy_protocol",
    "output_limit",
    "patch_doc",
    "tag_protocols",
    "text_reply",
]
