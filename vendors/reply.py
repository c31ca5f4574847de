"""A complete vendor answer and its token counts: what a stub builds in record mode, replay plays
back, and live mode builds for the refusals it sends itself (errors in the vendor's own shape)."""

from __future__ import annotations

from dataclasses import dataclass, field


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
class VendorReply:
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
