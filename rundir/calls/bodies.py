"""Content-addressed, zstd-compressed request and response bodies: `<run>/bodies/pack.bin`.

Bodies are keyed by the SHA-256 of their raw bytes and stored once, so a replay can serve them
again and an audit can re-hash them. They live in one append-only pack rather than a file each:
creating a file costs over a millisecond of kernel time on some disks, twice per call, which made
body storage the proxy's largest cost (bench/README.md). Each record is a header line
`<sha256> <compressed length>\\n` followed by one zstd frame; the index is rebuilt by scanning the
pack on open. Durability is group-committed: `sync()` (run off the event loop) fsyncs the pack.
A record torn by a crash is reported and cut off on open; the call it belonged to was never
logged, since the call log is written after the body.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
from pathlib import Path

import structlog
import zstandard

log = structlog.get_logger("harness.proxy")

PACK_NAME = "pack.bin"
_HEADER_MAX = 64 + 1 + 20 + 1


class BodyStore:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.root.mkdir(parents=True, exist_ok=True)
        self.pack = root / PACK_NAME
        self._fd = os.open(self.pack, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        self._compressor = zstandard.ZstdCompressor(level=3)
        self._index: dict[str, tuple[int, int]] = {}
        self._lock = threading.Lock()
        self._dirty = False
        self._end = self._scan()

    def _scan(self) -> int:
        """Index every whole record; cut off a torn tail. Returns the end of the last record."""
        size = os.fstat(self._fd).st_size
        offset = 0
        while offset < size:
            head = os.pread(self._fd, _HEADER_MAX, offset)
            newline = head.find(b"\n")
            if newline < 0:
                break
            try:
                digest, length_text = head[:newline].decode().split(" ")
                length = int(length_text)
            except ValueError:
                break
            start = offset + newline + 1
            if len(digest) != 64 or start + length > size:
                break
            self._index[digest] = (start, length)
            offset = start + length
        if offset < size:
            log.warning(
                "torn body record cut off", pack=str(self.pack), at=offset, bytes=size - offset
            )
            os.ftruncate(self._fd, offset)
            os.fsync(self._fd)
        return offset

    def __contains__(self, digest: str) -> bool:
        return digest in self._index

    def put(self, data: bytes) -> str:
        """Store `data`; returns its SHA-256 hex. Raises OSError if it cannot be written."""
        digest = hashlib.sha256(data).hexdigest()
        if digest in self._index:
            return digest
        frame = self._compressor.compress(data)
        header = f"{digest} {len(frame)}\n".encode()
        with self._lock:
            if digest in self._index:
                return digest
            # One write of header and frame: O_APPEND keeps a record in one piece.
            try:
                written = os.write(self._fd, header + frame)
            except OSError:
                self._cut_back()
                raise
            if written != len(header) + len(frame):
                # A full disk takes part of a record: cut it off, so a record written once
                # there is room again starts where the index says it does.
                self._cut_back()
                raise OSError(f"short write to {self.pack}: {written} bytes")
            self._index[digest] = (self._end + len(header), len(frame))
            self._end += written
            self._dirty = True
        return digest

    def _cut_back(self) -> None:
        with contextlib.suppress(OSError):
            os.ftruncate(self._fd, self._end)

    def get(self, digest: str) -> bytes:
        try:
            start, length = self._index[digest]
        except KeyError:
            raise KeyError(f"no body {digest} in {self.pack}") from None
        frame = os.pread(self._fd, length, start)
        try:
            data = zstandard.ZstdDecompressor().decompress(frame)
        except zstandard.ZstdError as e:
            raise ValueError(f"body {digest} cannot be read: the pack was altered ({e})") from e
        if hashlib.sha256(data).hexdigest() != digest:
            raise ValueError(f"body {digest} does not match its hash: the pack was altered")
        return data

    def digests(self) -> list[str]:
        return list(self._index)

    def sync(self) -> None:
        with self._lock:
            if not self._dirty or self._fd < 0:
                return
            self._dirty = False
        os.fsync(self._fd)

    def close(self) -> None:
        self.sync()
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1
