"""rundir.calls.content_decode: what an upstream compressed is read back exactly, or refused
loudly."""

from __future__ import annotations

import gzip
import zlib

import brotli
import pytest
import zstandard

from rundir.calls import content_decode
from rundir.calls.content_decode import DecodeError, StreamDecoder, decode_body

BODY = b'data: {"type":"content_block_delta","delta":{"text":"hello"}}\n\n' * 200


def _raw_deflate(data: bytes) -> bytes:
    obj = zlib.compressobj(wbits=-15)
    return obj.compress(data) + obj.flush()


ENCODED = {
    "gzip": gzip.compress(BODY),
    "x-gzip": gzip.compress(BODY),
    "deflate": zlib.compress(BODY),
    "br": brotli.compress(BODY),
    "zstd": zstandard.ZstdCompressor().compress(BODY),
    "identity": BODY,
    "gzip, br": brotli.compress(gzip.compress(BODY)),
}


@pytest.mark.parametrize("header", list(ENCODED))
def test_every_encoding_decodes_whole_and_in_pieces(header: str) -> None:
    data = ENCODED[header]
    assert decode_body(header, data) == BODY
    for size in (1, 7, 1000):
        decoder = StreamDecoder(header)
        out = b"".join(decoder.feed(data[i : i + size]) for i in range(0, len(data), size))
        assert out + decoder.flush() == BODY


def test_raw_deflate_is_read_too() -> None:
    """Some servers send deflate without the zlib wrapper (mitmproxy accepts it as well)."""
    assert decode_body("deflate", _raw_deflate(BODY)) == BODY


@pytest.mark.parametrize(
    ("header", "data", "why"),
    [
        ("compress", b"x", "unknown content-encoding"),
        ("gzip", b"not gzip at all", "corrupt"),
        ("gzip", gzip.compress(BODY)[:-8], "cut short"),
        ("br", brotli.compress(BODY)[:-3], "cut short"),
        ("zstd", zstandard.ZstdCompressor().compress(BODY)[:-3], "cut short"),
        ("deflate", b"\x01", "cut short"),
    ],
)
def test_what_cannot_be_read_is_refused(header: str, data: bytes, why: str) -> None:
    with pytest.raises(DecodeError, match=why):
        decode_body(header, data)


def test_a_decompression_bomb_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(content_decode, "MAX_DECODED", 1024)
    with pytest.raises(DecodeError, match="larger than"):
        decode_body("gzip", gzip.compress(b"\0" * 1_000_000))
