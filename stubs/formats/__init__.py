"""Output protocols a prompt asks for: dspy fields, XML tags, markdown, text replies.

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

import importlib
from typing import TYPE_CHECKING, Any

from stubs.formats.text_reply import text_reply

if TYPE_CHECKING:
    from stubs.formats.output_limit import cut_to_tokens
    from stubs.formats.text_reply import json_object_reply

# What this face offers is loaded on first use (PEP 562): a user of one name loads the module
# that defines it, not the whole part (a judge's process must not load scipy).
_OFFERED = {
    "cut_to_tokens": "stubs.formats.output_limit",
    "json_object_reply": "stubs.formats.text_reply",
}


def __getattr__(name: str) -> Any:
    if name not in _OFFERED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_OFFERED[name]), name)


__all__ = [
    "cut_to_tokens",
    "json_object_reply",
    "text_reply",
]
