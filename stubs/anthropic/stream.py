"""A finished Anthropic Message replayed as the vendor's SSE stream, one chunk per event.

The stream is derived from the same message dict as the plain reply, so a streamed call and a
plain call of the same request cannot disagree: the SDK's accumulated `get_final_message()`
equals the plain body. Event order (vendor docs, and the 2.14 SDK's accumulator):
message_start, ping, then per block content_block_start / content_block_delta... /
content_block_stop, then message_delta (stop reason, cumulative usage), then message_stop.
"""

from __future__ import annotations

import json
import re
from typing import Any

# A real tool-input stream arrives a few tokens at a time; this many characters is about that.
_JSON_PIECE = 16
# Splits text after each run of whitespace, keeping every character: "a b" -> ["a ", "b"].
_WORD_END = re.compile(r"(?<=\s)(?=\S)")


def _event(kind: str, data: dict[str, Any]) -> bytes:
    return f"event: {kind}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


def word_pieces(text: str, words_per_piece: int) -> list[str]:
    """`text` in pieces of a few words each; joined they give `text` back exactly."""
    words = [w for w in _WORD_END.split(text) if w]
    return ["".join(words[i : i + words_per_piece]) for i in range(0, len(words), words_per_piece)]


def _json_pieces(text: str) -> list[str]:
    return [text[i : i + _JSON_PIECE] for i in range(0, len(text), _JSON_PIECE)]


def _block_events(index: int, block: dict[str, Any], words: int) -> list[bytes]:
    kind = block["type"]
    deltas: list[dict[str, Any]] = []
    if kind == "text":
        start: dict[str, Any] = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": p} for p in word_pieces(block["text"], words)]
    elif kind == "thinking":
        start = {"type": "thinking", "thinking": "", "signature": ""}
        deltas = [
            {"type": "thinking_delta", "thinking": p} for p in word_pieces(block["thinking"], words)
        ]
        # The signature arrives last, just before the block closes.
        deltas.append({"type": "signature_delta", "signature": block["signature"]})
    elif kind == "tool_use":
        start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
        raw = json.dumps(block["input"], separators=(",", ":"))
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in _json_pieces(raw)]
    else:  # pragma: no cover - the builder makes only the three kinds above
        raise ValueError(f"cannot stream a {kind!r} block")
    out = [
        _event(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": index,
                "content_block": start,
            },
        )
    ]
    out.extend(
        _event("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d})
        for d in deltas
    )
    out.append(_event("content_block_stop", {"type": "content_block_stop", "index": index}))
    return out


def message_events(message: dict[str, Any], words_per_piece: int) -> list[bytes]:
    """The SSE events, one bytes each, that stream `message` (a full Message dict)."""
    usage = message["usage"]
    # message_start reports the input side in full and a nominal first output token; the
    # breakdown of output arrives with the cumulative count in message_delta.
    start_usage = {
        k: v for k, v in usage.items() if k not in ("output_tokens", "output_tokens_details")
    }
    start_usage["output_tokens"] = 1
    start = {
        **message,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": start_usage,
    }
    events = [
        _event("message_start", {"type": "message_start", "message": start}),
        _event("ping", {"type": "ping"}),
    ]
    for index, block in enumerate(message["content"]):
        events.extend(_block_events(index, block, words_per_piece))
    delta_usage = {
        k: usage[k]
        for k in (
            "input_tokens",
            "cache_creation_input_tokens",
            "cache_read_input_tokens",
            "output_tokens",
            "output_tokens_details",
        )
        if k in usage
    }
    events.append(
        _event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {
                    "stop_reason": message["stop_reason"],
                    "stop_sequence": message["stop_sequence"],
                },
                "usage": delta_usage,
            },
        )
    )
    events.append(_event("message_stop", {"type": "message_stop"}))
    return events
