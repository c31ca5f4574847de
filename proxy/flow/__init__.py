"""One call's mode-independent parts: its state, intake (strict JSON, vendor checks, the request
hash), HTTP/1 framing refusals, the failsafe 500, header rewriting, the arms' turn board, the
sampling rewrite (pins and the output cap, the same in every mode).

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

import importlib
from typing import TYPE_CHECKING, Any

from proxy.flow.intake import intake

if TYPE_CHECKING:
    from proxy.flow.after_reply import AfterReply
    from proxy.flow.arm_pins import ReferenceBook
    from proxy.flow.callstate import CallState
    from proxy.flow.control import HarnessControl, TurnBoard, TurnRef
    from proxy.flow.failsafe import (
        INTERNAL_ERROR_FLAG,
        as_response,
        bad_purpose,
        internal_reply,
        mark_failed,
        misbilled_judge,
        safe_text,
    )
    from proxy.flow.framing import Refusal, install, parse_refusal
    from proxy.flow.header_fields import lowered, rewrite
    from proxy.flow.identity import flag_unpinned_model
    from proxy.flow.intake import keep_request, stub_digest
    from proxy.flow.reuse import ReuseBook, parse_reuse, reply_as_sent
    from proxy.flow.sampling import pin_call
    from proxy.flow.sse_block import DONE, PlainBlock, Relay, plain_block
    from proxy.flow.sse_events import UNPARSED, EventFramer, RawEvent, Relayed

# What this face offers is loaded on first use (PEP 562): a user of one name loads the module
# that defines it, not the whole part (a judge's process must not load scipy).
_OFFERED = {
    "AfterReply": "proxy.flow.after_reply",
    "CallState": "proxy.flow.callstate",
    "DONE": "proxy.flow.sse_block",
    "EventFramer": "proxy.flow.sse_events",
    "HarnessControl": "proxy.flow.control",
    "INTERNAL_ERROR_FLAG": "proxy.flow.failsafe",
    "PlainBlock": "proxy.flow.sse_block",
    "RawEvent": "proxy.flow.sse_events",
    "ReferenceBook": "proxy.flow.arm_pins",
    "Refusal": "proxy.flow.framing",
    "Relay": "proxy.flow.sse_block",
    "Relayed": "proxy.flow.sse_events",
    "ReuseBook": "proxy.flow.reuse",
    "TurnBoard": "proxy.flow.control",
    "TurnRef": "proxy.flow.control",
    "UNPARSED": "proxy.flow.sse_events",
    "as_response": "proxy.flow.failsafe",
    "bad_purpose": "proxy.flow.failsafe",
    "flag_unpinned_model": "proxy.flow.identity",
    "install": "proxy.flow.framing",
    "internal_reply": "proxy.flow.failsafe",
    "keep_request": "proxy.flow.intake",
    "lowered": "proxy.flow.header_fields",
    "mark_failed": "proxy.flow.failsafe",
    "misbilled_judge": "proxy.flow.failsafe",
    "parse_refusal": "proxy.flow.framing",
    "parse_reuse": "proxy.flow.reuse",
    "pin_call": "proxy.flow.sampling",
    "plain_block": "proxy.flow.sse_block",
    "reply_as_sent": "proxy.flow.reuse",
    "rewrite": "proxy.flow.header_fields",
    "safe_text": "proxy.flow.failsafe",
    "stub_digest": "proxy.flow.intake",
}


def __getattr__(name: str) -> Any:
    if name not in _OFFERED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_OFFERED[name]), name)


__all__ = [
    "DONE",
    "INTERNAL_ERROR_FLAG",
    "UNPARSED",
    "AfterReply",
    "CallState",
    "EventFramer",
    "HarnessControl",
    "PlainBlock",
    "RawEvent",
    "ReferenceBook",
    "Refusal",
    "Relay",
    "Relayed",
    "ReuseBook",
    "TurnBoard",
    "TurnRef",
    "as_response",
    "bad_purpose",
    "flag_unpinned_model",
    "install",
    "intake",
    "internal_reply",
    "keep_request",
    "lowered",
    "mark_failed",
    "misbilled_judge",
    "parse_refusal",
    "parse_reuse",
    "pin_call",
    "plain_block",
    "reply_as_sent",
    "rewrite",
    "safe_text",
    "stub_digest",
]
