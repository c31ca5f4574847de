"""Undo a reply's content-encoding, whole or chunk by chunk, so the proxy can read what it relays.

The proxy asks every vendor for `accept-encoding: identity`, but an upstream may compress anyway.
A compressed body cannot be searched for a leaked key or read for usage, so it is decoded before
either and relayed decoded (the caller drops the content-encoding header). gzip, deflate, br and
zstd are the encodings mitmproxy itself knows (mitmproxy.net.encoding); a stack of them
("gzip, br") is undone in reverse order. An unknown encoding or a corrupt body raises
`DecodeError`: the caller fails closed, since it cannot see what the body holds.
"""

from __future__ import annotations

import zlib
from typing import Protocol

import brotli
import zstandard

#: A decoded body past this size is refused: a small compressed reply must not fill the memory.
MAX_DECODED = 256 * 1024 * 1024


class DecodeError(ValueError):
    """The body cannot be decoded; the message says why."""


class _Decoder(Protocol):
    def feed(self, data: bytes) -> bytes: ...
    def flush(self) -> bytes: ...


class _Zlib:
    def __init__(self, wbits: int | None) -> None:
        self.wbits = wbits  # None: deflate, zlib-wrapped or raw, decided by the first bytes
        self.obj: zlib._Decompress | None = None if wbits is None else zlib.decompressobj(wbits)
        self.head = b""

    def feed(self, data: bytes) -> bytes:
        if self.obj is None:
            self.head += data
            if len(self.head) < 2:
                return b""
            # RFC 9110 says deflate is zlib-wrapped; some servers send raw deflate (as
            # mitmproxy's own decoder allows): a zlib header is a multiple of 31 with method 8.
            b0, b1 = self.head[0], self.head[1]
            wrapped = b0 & 0x0F == 8 and (b0 << 8 | b1) % 31 == 0
            self.obj = zlib.decompressobj(15 if wrapped else -15)
            data, self.head = self.head, b""
        try:
            return self.obj.decompress(data)
        except zlib.error as e:
            raise DecodeError(f"corrupt compressed body: {e}") from e

    def flush(self) -> bytes:
        if self.obj is None:
            if self.head:
                raise DecodeError("compressed body cut short")
            return b""
        try:
            rest = self.obj.flush()
        except zlib.error as e:
            raise DecodeError(f"corrupt compressed body: {e}") from e
        if not self.obj.eof:
            raise DecodeError("compressed body cut short")
        return rest


class _Brotli:
    def __init__(self) -> None:
        self.obj = brotli.Decompressor()

    def feed(self, data: bytes) -> bytes:
        try:
            return bytes(self.obj.process(data))
        except brotli.error as e:
            raise DecodeError(f"corrupt br body: {e}") from e

    def flush(self) -> bytes:
        if not self.obj.is_finished():
            raise DecodeError("br body cut short")
        return b""


class _Zstd:
    def __init__(self) -> None:
        self.obj = zstandard.ZstdDecompressor().decompressobj()

    def feed(self, data: bytes) -> bytes:
        try:
            return bytes(self.obj.decompress(data))
        except zstandard.ZstdError as e:
            raise DecodeError(f"corrupt zstd body: {e}") from e

    def flush(self) -> bytes:
        if not self.obj.eof:
            raise DecodeError("zstd body cut short")
        return b""


def _decoder(name: str) -> _Decoder | None:
    if name in ("identity", ""):
        return None
    if name in ("gzip", "x-gzip"):
        return _Zlib(31)
    if name == "deflate":
        return _Zlib(None)
    if name == "br":
        return _Brotli()
    if name == "zstd":
        return _Zstd()
    raise DecodeError(f"unknown content-encoding {name!r}")


class StreamDecoder:
    """Decodes a body with `content-encoding: header`, fed in chunks."""

    def __init__(self, header: str) -> None:
        names = [part.strip().lower() for part in header.split(",")]
        # Applied in the order listed, so undone in reverse.
        self.decoders = [d for d in (_decoder(n) for n in reversed(names)) if d is not None]
        self.size = 0

    def feed(self, data: bytes) -> bytes:
        for decoder in self.decoders:
            data = decoder.feed(data)
        return self._count(data)

    def flush(self) -> bytes:
        out = b""
        for decoder in self.decoders:
            # What an outer decoder flushes still passes through the inner ones.
            out = (decoder.feed(out) if out else b"") + decoder.flush()
        return self._count(out)

    def _count(self, data: bytes) -> bytes:
        self.size += len(data)
        if self.size > MAX_DECODED:
            raise DecodeError(f"decoded body larger than {MAX_DECODED} bytes")
        return data


def decode_body(header: str, body: bytes) -> bytes:
    """A whole body decoded per its content-encoding header."""
    decoder = StreamDecoder(header)
    return decoder.feed(body) + decoder.flush()
