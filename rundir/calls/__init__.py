"""The records of a run's calls: the call log (`calls.jsonl`) and its bodies (`bodies/pack.bin`,
written by the proxy, read back without change), a logged request as it went out (its rewrites),
the request hash and its masks, the reservation journal that covers a live call before it is
forwarded (`reservations.jsonl`), and the decoding of a reply's content-encoding.

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rundir.calls.bodies import BodyStore
    from rundir.calls.calllog import (
        CALL_SCHEMA,
        UNSTORED_FLAGS,
        CallLog,
        CallLogError,
        CallRecord,
        Outcome,
        Rewrite,
        Timing,
        Tokens,
        TokenSource,
        read_calls,
    )
    from rundir.calls.content_decode import DecodeError, StreamDecoder, decode_body
    from rundir.calls.journal import ReservationJournal, recover_spend
    from rundir.calls.masking import DEFAULT_BODY_MASKS, hash_masked, mask_body, request_hash
    from rundir.calls.packread import PackReader
    from rundir.calls.rewrites import as_sent
    from rundir.calls.value_masks import MaskError, is_value_mask, parse_value_mask

# What this face offers is loaded on first use (PEP 562): a user of one name loads the module
# that defines it, not the whole part (a judge's process must not load scipy).
_OFFERED = {
    "BodyStore": "rundir.calls.bodies",
    "CALL_SCHEMA": "rundir.calls.calllog",
    "CallLog": "rundir.calls.calllog",
    "CallLogError": "rundir.calls.calllog",
    "CallRecord": "rundir.calls.calllog",
    "DEFAULT_BODY_MASKS": "rundir.calls.masking",
    "DecodeError": "rundir.calls.content_decode",
    "MaskError": "rundir.calls.value_masks",
    "Outcome": "rundir.calls.calllog",
    "PackReader": "rundir.calls.packread",
    "ReservationJournal": "rundir.calls.journal",
    "Rewrite": "rundir.calls.calllog",
    "StreamDecoder": "rundir.calls.content_decode",
    "Timing": "rundir.calls.calllog",
    "TokenSource": "rundir.calls.calllog",
    "Tokens": "rundir.calls.calllog",
    "UNSTORED_FLAGS": "rundir.calls.calllog",
    "as_sent": "rundir.calls.rewrites",
    "decode_body": "rundir.calls.content_decode",
    "hash_masked": "rundir.calls.masking",
    "is_value_mask": "rundir.calls.value_masks",
    "mask_body": "rundir.calls.masking",
    "parse_value_mask": "rundir.calls.value_masks",
    "read_calls": "rundir.calls.calllog",
    "recover_spend": "rundir.calls.journal",
    "request_hash": "rundir.calls.masking",
}


def __getattr__(name: str) -> Any:
    if name not in _OFFERED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_OFFERED[name]), name)


__all__ = [
    "CALL_SCHEMA",
    "DEFAULT_BODY_MASKS",
    "UNSTORED_FLAGS",
    "BodyStore",
    "CallLog",
    "CallLogError",
    "CallRecord",
    "DecodeError",
    "MaskError",
    "Outcome",
    "PackReader",
    "ReservationJournal",
    "Rewrite",
    "StreamDecoder",
    "Timing",
    "TokenSource",
    "Tokens",
    "as_sent",
    "decode_body",
    "hash_masked",
    "is_value_mask",
    "mask_body",
    "parse_value_mask",
    "read_calls",
    "recover_spend",
    "request_hash",
]
