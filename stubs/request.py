"""What a stub sees of a call, and what it answers.

A stub is a pure function of `StubRequest`: the same request (after masking) gives the same
bytes on every machine. The only source of variation it may use is `digest`, the SHA-256 of the
masked request, so nothing here reads clocks, random generators or process state.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from vendors.hosts import Vendor


@dataclass(frozen=True)
class StubRequest:
    vendor: Vendor
    route: str  # e.g. "anthropic.messages", "openai.chat" (see stubs.routes.ROUTES)
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


@dataclass
class Usage:
    """Token counts in the harness's own vocabulary (not double counted).

    `input_tokens` excludes cache reads and writes (Anthropic's convention); `output_tokens` is
    the billed total, reasoning included; `reasoning_tokens` is the part of it spent thinking.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0


@dataclass
class StubReply:
    """A complete vendor answer. `chunks` is the body split as it should be sent on the wire.

    For a plain reply `chunks` has one element; for a streamed reply each element is one SSE event
    (or a group of them) so delays between chunks mean something.
    """

    status: int
    chunks: list[bytes]
    content_type: str = "application/json"
    stream: bool = False
    model: str | None = None
    usage: Usage = field(default_factory=Usage)
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def body(self) -> bytes:
        return b"".join(self.chunks)
