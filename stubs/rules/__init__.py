"""The stubs file (stubs.toml): reply rules, delays and the context each stub handler receives.

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

from stubs.rules.context import StubContext
from stubs.rules.delays import DelayRule, delay_for
from stubs.rules.replies import ReplyBook, StubsFileError, conversation_texts

__all__ = [
    "DelayRule",
    "ReplyBook",
    "StubContext",
    "StubsFileError",
    "conversation_texts",
    "delay_for",
]
