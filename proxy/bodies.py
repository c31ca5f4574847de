"""Content-addressed, zstd-compressed request and response bodies under `<run>/bodies/`.

A body is stored once per SHA-256 of its raw bytes at `bodies/<aa>/<sha256>.zst`, so a replay can
serve it again and an audit can re-hash it. Writes go to a temporary name, then are
renamed, so a crash never leaves a truncated body under a valid name. Durability is
group-committed: `sync()` (run off the event loop) fsyncs every body written since the last sync
and the folders that gained names.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

import zstandard


class BodyStore:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.root.mkdir(parents=True, exist_ok=True)
        self._compressor = zstandard.ZstdCompressor(level=3)
        self._known: set[str] = set()
        self._unsynced: list[Path] = []
        self._lock = threading.Lock()

    def path_for(self, digest: str) -> Path:
        return self.root / digest[:2] / f"{digest}.zst"

    def put(self, data: bytes) -> str:
        """Store `data`; returns its SHA-256 hex. Raises OSError if it cannot be made durable."""
        digest = hashlib.sha256(data).hexdigest()
        if digest in self._known:
            return digest
        path = self.path_for(digest)
        if not path.exists():
            path.parent.mkdir(exist_ok=True)
            tmp = path.with_suffix(f".tmp{os.getpid()}")
            with open(tmp, "wb") as f:
                f.write(self._compressor.compress(data))
            os.replace(tmp, path)
            with self._lock:
                self._unsynced.append(path)
        self._known.add(digest)
        return digest

    def get(self, digest: str) -> bytes:
        data = zstandard.ZstdDecompressor().decompress(self.path_for(digest).read_bytes())
        if hashlib.sha256(data).hexdigest() != digest:
            raise ValueError(f"body {digest} does not match its hash: the file was altered")
        return data

    def sync(self) -> None:
        with self._lock:
            paths, self._unsynced = self._unsynced, []
        folders = set()
        for path in paths:
            fd = os.open(path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            folders.add(path.parent)
        for folder in folders:
            fd = os.open(folder, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
