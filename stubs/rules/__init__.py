"""The stubs file (stubs.toml): reply rules, delays and the context each stub handler receives.

Submodules are imported where used (not here), so loading one does not load the others."""

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
