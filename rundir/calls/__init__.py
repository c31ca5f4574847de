"""The records of a run's calls: the call log (`calls.jsonl`) and its bodies (`bodies/pack.bin`,
written by the proxy, read back without change), a logged request as it went out (its rewrites),
the request hash and its masks, the reservation journal that covers a live call before it is
forwarded (`reservations.jsonl`), and the decoding of a reply's content-encoding.

Submodules are imported where used (not here), so importing one loads only what it needs."""

__all__ = [
    "bodies",
    "calllog",
    "content_decode",
    "journal",
    "masking",
    "packread",
    "rewrites",
    "value_masks",
]
