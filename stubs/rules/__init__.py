"""The stubs file (stubs.toml): reply rules, delays and the context each stub handler receives.

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from stubs.rules.context import StubContext
    from stubs.rules.delays import DelayRule, delay_for
    from stubs.rules.replies import ReplyBook, StubsFileError, conversation_texts

# What this face offers is loaded on first use (PEP 562): a user of one name loads the module
# that defines it, not the whole part (a judge's process must not load scipy).
_OFFERED = {
    "DelayRule": "stubs.rules.delays",
    "ReplyBook": "stubs.rules.replies",
    "StubContext": "stubs.rules.context",
    "StubsFileError": "stubs.rules.replies",
    "conversation_texts": "stubs.rules.replies",
    "delay_for": "stubs.rules.delays",
}


def __getattr__(name: str) -> Any:
    if name not in _OFFERED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_OFFERED[name]), name)


__all__ = [
    "DelayRule",
    "ReplyBook",
    "StubContext",
    "StubsFileError",
    "conversation_texts",
    "delay_for",
]
