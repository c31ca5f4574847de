"""Read a run's body pack (`bodies/pack.bin`, format in rundir/calls/bodies.py) without changing it.

rundir.calls.bodies.BodyStore opens the pack read-write and cuts off a torn tail: right for the
proxy that owns it, wrong for the gate and the audit, which must leave the evidence as they found it
and report damage (an edited header hides every record after it) instead of repairing it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import zstandard

from rundir.calls.bodies import PACK_NAME


@dataclass
class PackReader:
    path: Path
    data: bytes = b""
    index: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: Where the pack stops being readable, if it does before its end (offset, why).
    damage: tuple[int, str] | None = None

    @classmethod
    def open(cls, run_dir: Path) -> PackReader:
        path = run_dir / "bodies" / PACK_NAME
        reader = cls(path)
        if path.is_file():
            reader.data = path.read_bytes()
            reader._scan()
        return reader

    def _scan(self) -> None:
        data, offset = self.data, 0
        while offset < len(data):
            newline = data.find(b"\n", offset, offset + 90)
            if newline < 0:
                self.damage = (offset, "no record header")
                return
            try:
                digest, length_text = data[offset:newline].decode().split(" ")
                length = int(length_text)
            except ValueError:
                self.damage = (offset, "record header garbled")
                return
            start = newline + 1
            if len(digest) != 64 or start + length > len(data):
                self.damage = (offset, "record header garbled or record cut short")
                return
            self.index[digest] = (start, length)
            offset = start + length

    def __contains__(self, digest: str) -> bool:
        return digest in self.index

    def get(self, digest: str) -> bytes:
        """The body with this SHA-256; KeyError if absent, ValueError if it does not verify."""
        start, length = self.index[digest]
        try:
            body = zstandard.ZstdDecompressor().decompress(self.data[start : start + length])
        except zstandard.ZstdError as e:
            raise ValueError(f"cannot be decompressed ({e})") from e
        found = hashlib.sha256(body).hexdigest()
        if found != digest:
            raise ValueError(f"content hashes to {found}")
        return body
