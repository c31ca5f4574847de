"""What a stub sees of a call, and what it answers.

A stub is a pure function of `StubRequest`: the same request (after masking) gives the same
bytes on every machine. The only source of variation it may use is `digest`, the SHA-256 of the
masked request, so nothing here reads clocks, random generators or process state.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from vendors.hosts import Vendor


@dataclass(frozen=True)
class StubRequest:
    vendor: Vendor
    route: str  # e.g. "anthropic.messages", "openai.chat" (see vendors.routes.ROUTES)
    body: dict[str, Any]  # the parsed JSON body ({} for a GET)
    digest: bytes  # SHA-256 of the masked request: the only permitted source of variation
    purpose: str = "main"
    arm: str | None = None

    def pick(self, salt: str, n: int) -> int:
        """A deterministic index in range(n), independent for each `salt`."""
        if n <= 0:
            raise ValueError("pick() needs n >= 1")
        h = hashlib.sha256(self.digest + salt.encode()).digest()
        return int.from_bytes(h[:8], "big") % n

    def token_id(self, salt: str) -> str:
        """A deterministic vendor-style id suffix (24 lowercase alphanumerics)."""
        alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
        h = hashlib.sha256(self.digest + b"id:" + salt.encode()).digest()
        return "".join(alphabet[b % len(alphabet)] for b in h[:24])
