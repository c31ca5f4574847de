"""One call's mode-independent parts: its state, intake (strict JSON, vendor checks, the request
hash), HTTP/1 framing refusals, the failsafe 500, header rewriting, the arms' turn board, the
sampling rewrite (pins and the output cap, the same in every mode).

Submodules are imported where used (not here), so importing one loads only what it needs."""

__all__ = [
    "after_reply",
    "arm_pins",
    "callstate",
    "control",
    "failsafe",
    "framing",
    "header_fields",
    "identity",
    "intake",
    "reuse",
    "safe_json",
    "sampling",
    "sse_events",
]
