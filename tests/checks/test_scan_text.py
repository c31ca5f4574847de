"""The forms a token can hide in inside a body or a store file, each found."""

from __future__ import annotations

import gzip
import json

import zstandard

from harness.checks.scan_text import body_texts, file_texts

TOKEN = "ZEBRA-7731"


def _found(texts: list[str]) -> bool:
    return any(TOKEN.casefold() in text.casefold() for text in texts)


def test_a_token_split_across_stream_events_is_reassembled() -> None:
    anthropic = "".join(
        "event: content_block_delta\ndata: "
        + json.dumps({"type": "content_block_delta", "index": 0,
                      "delta": {"type": "text_delta", "text": part}}) + "\n\n"
        for part in ("My code is ZEB", "RA-77", "31.")
    )  # fmt: skip
    assert TOKEN not in anthropic and _found(body_texts(anthropic.encode()))
    openai = (
        "".join(
            "data: " + json.dumps({"choices": [{"index": 0, "delta": {"content": part}}]}) + "\n\n"
            for part in ("zebra", "-7731")
        )
        + "data: [DONE]\n\n"
    )
    assert _found(body_texts(openai.encode()))


def test_escaped_and_compressed_tokens_are_found() -> None:
    escaped = b'{"messages": [{"content": "Z\\u0045BRA-7731"}]}'  # JSON's escape for "E"
    assert TOKEN.encode() not in escaped and _found(body_texts(escaped))
    assert _found(body_texts(gzip.compress(TOKEN.encode())))
    assert _found(file_texts(zstandard.ZstdCompressor().compress(f"x {TOKEN} y".encode())))
    assert not _found(body_texts(b"nothing here"))
