"""One call's mode-independent parts: its state, intake (strict JSON, vendor checks, the request
hash), HTTP/1 framing refusals, the failsafe 500, header rewriting, the arms' turn board, the
sampling rewrite (pins and the output cap, the same in every mode).

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

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
from proxy.flow.intake import intake, keep_request, stub_digest
from proxy.flow.reuse import ReuseBook, parse_reuse, reply_as_sent
from proxy.flow.sampling import pin_call
from proxy.flow.sse_block import DONE, PlainBlock, Relay, plain_block
from proxy.flow.sse_events import UNPARSED, EventFramer, RawEvent, Relayed

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
