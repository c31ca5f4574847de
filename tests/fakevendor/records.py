"""What the fake vendor observed: requests received, what it served of each, and disconnects.

Records are written by the server's thread under the FakeVendor's lock; tests get copies.
Times are `time.time()` (wall) and `time.monotonic()` (for measuring deadlines).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

# How a reply ended, from the fake's side:
#   complete      every byte sent (an error status or an error event counts as complete)
#   cut           the fake closed mid-reply without the end of the message (cut_after)
#   reset         the fake reset the connection (reset, reset_after)
#   disconnected  the client closed the connection before the reply ended
#   stopped       the fake was shut down while the reply was in flight
#   in_flight     still being sent (stalls and trickles stay here until the client leaves)
Outcome = Literal["complete", "cut", "reset", "disconnected", "stopped", "in_flight"]


@dataclass(frozen=True)
class ReceivedRequest:
    id: str  # "req-1", "req-2", ... in arrival order
    method: str
    path: str  # without the query string
    query: str
    headers: dict[str, str]  # lower-cased names; the last value of a repeated header wins
    raw_headers: list[tuple[str, str]]
    body: Any  # parsed JSON, or None when empty or not JSON
    raw_body: bytes
    behaviour: str  # the behaviour applied ("" for a normal reply)
    time: float
    monotonic: float

    @property
    def api_key(self) -> str | None:
        """The key the client sent: `x-api-key` (Anthropic) or the bearer token (OpenAI)."""
        return key_of(self.headers)


def key_of(headers: dict[str, str]) -> str | None:
    if "x-api-key" in headers:
        return headers["x-api-key"]
    auth = headers.get("authorization", "")
    return auth[7:] if auth.lower().startswith("bearer ") else None


@dataclass
class Served:
    """What one request was actually sent. Output tokens count only what reached the socket."""

    request_id: str
    route: str | None
    model: str | None
    status: int
    stream: bool
    input_tokens: int = 0  # billed once the vendor starts a 200 reply (excludes cache tokens)
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    # The vendor's own final count when its usage event (or plain body) was sent; otherwise the
    # fake's count of the output text (text, thinking, tool arguments) written before it stopped.
    output_tokens: int = 0
    full_output_tokens: int = 0  # what the whole reply holds
    usage_sent: bool = False  # whether the vendor's final usage reached the client
    text_sent: str = ""
    events_total: int = 0
    events_sent: int = 0
    bytes_sent: int = 0  # body bytes, framing excluded
    outcome: Outcome = "in_flight"
    started: float = 0.0  # monotonic, when the request was read
    first_byte: float | None = None  # monotonic, when the status line was written
    ended: float | None = None  # monotonic


@dataclass(frozen=True)
class Disconnect:
    request_id: str
    time: float
    monotonic: float
    events_sent: int


@dataclass
class ObservedState:
    requests: list[ReceivedRequest] = field(default_factory=list)
    served: dict[str, Served] = field(default_factory=dict)
    disconnects: list[Disconnect] = field(default_factory=list)
    counter: int = 0
