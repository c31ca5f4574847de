"""The records of a run's calls: the call log (`calls.jsonl`) and its bodies (`bodies/pack.bin`,
written by the proxy, read back without change), a logged request as it went out (its rewrites),
the request hash and its masks, the reservation journal that covers a live call before it is
forwarded (`reservations.jsonl`), and the decoding of a reply's content-encoding.

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

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
