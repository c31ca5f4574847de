"""Live mode's side of proxy.redact.secrets: a reply's status line, headers and body are cleaned of
the
study's keys on their way through mitmproxy, before the arm or the run directory sees them.

Headers are cleaned in `responseheaders` (before mitmproxy relays them), a stream chunk by chunk
in the tap (before the usage meter and the relay), a plain body in `response` (before mitmproxy
relays it and before the call log stores it). A compressed body is decoded first and relayed
decoded: the key could hide in it, and the usage reader needs the plain text too.
"""

from __future__ import annotations

import structlog
from mitmproxy import http

from proxy.flow import CallState, Relay
from proxy.redact.events import EventTextGuard
from proxy.redact.secrets import FLAG, SecretRedactor, StreamRedactor
from rundir.calls import DecodeError, StreamDecoder, decode_body
from vendors.errors import error_reply

log = structlog.get_logger("harness.proxy")

UNDECODABLE = "undecodable_body"


def flag(state: CallState, hits: int) -> None:
    if hits and FLAG not in state.flags:
        state.flags.append(FLAG)
        # Says where, never what: the value is the thing being kept in.
        log.warning("an upstream quoted a study key back; redacted", seq=state.seq)


def redact_head(redactor: SecretRedactor, state: CallState, response: http.Response) -> None:
    """Header names and values, and the reason phrase, a vendor could quote a key in."""
    fields, hits = redactor.redact_headers(response.headers.fields)
    if hits:
        response.headers.fields = tuple(fields)
        flag(state, hits)
    reason, hits = redactor.redact(response.reason.encode("latin-1", "replace"))
    if hits:
        response.reason = reason.decode("latin-1")
        flag(state, hits)


class StreamCleaner:
    """Decodes (if the upstream compressed it) and redacts a streamed body, chunk by chunk."""

    def __init__(self, redactor: SecretRedactor, state: CallState, response: http.Response):
        self.state = state
        encoding = response.headers.get("content-encoding", "")
        # Raises DecodeError for an encoding nobody can read: the caller refuses the stream.
        self.decoder = StreamDecoder(encoding) if encoding else None
        if encoding:
            response.headers.pop("content-encoding", None)
        self.secrets: StreamRedactor = redactor.stream()
        # Bytes first (a key inside one event), then text (a key split across events).
        self.events = EventTextGuard(redactor)

    # Each returns the events that go out, framed and parsed once for the key guard and the
    # usage meter both (`StreamMeter.feed_events`).

    def feed(self, chunk: bytes) -> list[Relay]:
        data = self.decoder.feed(chunk) if self.decoder else chunk
        return self._count(self.events.feed_events(self.secrets.feed(data)))

    def finish(self) -> list[Relay]:
        """The end of the stream: the held tail, redacted. It must go out before the end."""
        data = self.decoder.flush() if self.decoder else b""
        return self._count(self.events.finish_events(self.secrets.finish(data)))

    def drain(self) -> list[Relay]:
        """A cut stream: the held tail (redacted), for the meter only; never relayed."""
        if self.secrets.finished:
            return []
        return self._count(self.events.finish_events(self.secrets.finish()))

    def _count(self, out: list[Relay]) -> list[Relay]:
        flag(self.state, self.secrets.hits + self.events.hits)
        return out


def redact_plain(redactor: SecretRedactor, state: CallState, response: http.Response) -> bytes:
    """The plain body decoded and redacted, set on the response (so that is what is relayed)
    and returned (so that is what is stored)."""
    raw = response.raw_content or b""
    encoding = response.headers.get("content-encoding", "")
    try:
        body = decode_body(encoding, raw) if encoding else raw
    except DecodeError as e:
        # What the body holds cannot be seen, so it cannot be relayed or stored.
        state.flags.append(UNDECODABLE)
        log.error("an upstream reply could not be decoded", seq=state.seq, error=str(e))
        refused = error_reply(
            state.vendor,
            502,
            f"The harness proxy could not decode the vendor's reply ({e}); it was not relayed.",
        )
        response.headers.pop("content-encoding", None)
        response.headers["content-type"] = "application/json"
        response.status_code = 502
        response.set_content(refused.body)
        return refused.body
    clean, hits = redactor.redact(body)
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        # An event stream read whole (a route the meter does not stream): keys split across
        # its text deltas too.
        events = EventTextGuard(redactor)
        clean = events.finish(clean)
        hits += events.hits
    if encoding or hits:
        response.headers.pop("content-encoding", None)
        response.set_content(clean)
    flag(state, hits)
    if response.trailers:
        fields, hits = redactor.redact_headers(response.trailers.fields)
        response.trailers.fields = tuple(fields)
        flag(state, hits)
    return clean
