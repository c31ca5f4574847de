"""Replay mode: answer every call from an earlier run's call log, never from a vendor or a stub.

A call is matched on (arm, request hash), the hash of the masked request (rundir.calls.masking), so
the volatile fields an SDK adds do not break a match while any real change to the request does. The
same request may have been sent several times (a retried turn, a repeated question): its
recordings are served in the order they were sent, and one more repeat than was recorded is a
miss rather than a second copy of the last reply, because serving an answer the source run never
gave would make the replay claim more than the recording shows.

A miss fails loudly: the arm gets a vendor-shaped 409 its SDK raises as a typed error, and the
call log gets a record with outcome `replay_miss`. Nothing is ever forwarded, so no key is needed.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import structlog
from mitmproxy import http

from proxy.flow import CallState
from proxy.modes.base import LocalMode, ModeName
from proxy.modes.stream_server import Playback, StreamServer
from rundir.calls import BodyStore, CallRecord, Tokens, read_calls
from stubs.rules import DelayRule
from vendors.errors import error_reply
from vendors.reply import VendorReply

log = structlog.get_logger("harness.proxy")

# Conflict: the request conflicts with the recording. Both SDKs raise ConflictError; the body's
# type is each vendor's for a 409 (vendors/errors.py: conflict_error, invalid_request_error).
MISS_STATUS = 409
# Both official SDKs retry a 409 unless told not to; a retry of a miss can only miss again.
NO_RETRY = {"x-should-retry": "false"}
# Recorded outcomes of a stream that broke before its end (the vendor, the deadline, shutdown).
CUT_OUTCOMES = frozenset({"upstream_cut", "upstream_deadline", "shutdown"})


class ReplaySourceError(ValueError):
    """The run to replay from cannot be read (missing, or not a run directory)."""


@dataclass
class Miss:
    seq: int
    arm: str
    route: str
    request_hash: str


@dataclass
class ReplayMode(LocalMode):
    name: ClassVar[ModeName] = "replay"
    source: Path
    stream_server: StreamServer
    # Play streamed replies with the recorded time to first byte and an even spread of the
    # recorded stream duration over the chunks. Off by default: a replay checks what was said,
    # and waiting out a slow vendor's latency again only makes it slower.
    timing: bool = False
    queues: dict[tuple[str, str], deque[CallRecord]] = field(default_factory=dict)
    bodies: BodyStore | None = None
    misses: list[Miss] = field(default_factory=list)

    @classmethod
    def load(cls, source: Path, stream_server: StreamServer, timing: bool = False) -> ReplayMode:
        calls_path = source / "calls.jsonl"
        if not calls_path.is_file():
            raise ReplaySourceError(
                f"harness_replay_from {source}: no calls.jsonl there; give a run directory"
            )
        try:
            records = read_calls(calls_path)
        except ValueError as e:
            raise ReplaySourceError(f"harness_replay_from: {e}") from e
        mode = cls(source, stream_server, timing)
        # Lines are written when calls finish; seq is their arrival order, which is the order
        # an identical request must be answered in again.
        for record in sorted(records, key=lambda r: r.seq):
            if record.response_hash is None or record.status < 100:
                continue  # the call got no reply (cut before one came): nothing to serve
            mode.queues.setdefault((record.arm, record.request_hash), deque()).append(record)
        log.info(
            "replaying from a recorded run",
            source=str(source),
            calls=sum(len(queue) for queue in mode.queues.values()),
        )
        # Only ever read (`get`): BodyStore writes to a pack solely to cut a torn tail, which a
        # run that closed cleanly does not have.
        mode.bodies = BodyStore(source / "bodies")
        return mode

    async def respond(self, flow: http.HTTPFlow, state: CallState) -> VendorReply:
        return self.answer(state)

    def answer(self, state: CallState) -> VendorReply:
        """The recorded reply for a request that passed intake, or a loud miss."""
        queue = self.queues.get((state.arm, state.request_hash))
        if not queue:
            return self._miss(state)
        record = queue.popleft()
        assert self.bodies is not None and record.response_hash is not None
        try:
            body = self.bodies.get(record.response_hash)
        except (KeyError, ValueError) as e:
            # A recording we cannot read back is not a recording: fail the call, say why.
            state.outcome = "proxy_error"
            state.error = str(e)
            return error_reply(state.vendor, 500, f"harness replay: {e}")
        state.outcome = record.outcome
        state.tokens = Tokens(**record.tokens.model_dump())
        state.flags.append(f"replay_of={record.seq}")
        state.recording = record
        return VendorReply(
            status=record.status,
            chunks=_split(body, record.response_chunks if record.stream else None),
            content_type=record.response_content_type or _content_type(record),
            stream=record.stream,
            model=record.model_served,
        )

    def _miss(self, state: CallState) -> VendorReply:
        state.outcome = "replay_miss"
        self.misses.append(Miss(state.seq, state.arm, state.route_name, state.request_hash))
        log.error(
            "replay miss: no recorded response",
            arm=state.arm,
            route=state.route_name,
            request_hash=state.request_hash,
        )
        reply = error_reply(
            state.vendor,
            MISS_STATUS,
            f"harness replay: no recorded response for this request (arm {state.arm}, "
            f"route {state.route_name}, request hash {state.request_hash}) in {self.source}; "
            "the arm sent a request the recorded run did not, or sent it more often",
        )
        reply.headers.update(NO_RETRY)
        return reply

    def send(self, flow: http.HTTPFlow, state: CallState, reply: VendorReply) -> None:
        """Answer now, or hand a streamed reply to the stream server to play chunk by chunk."""
        state.reply = reply
        delay = self._delay(state, reply)
        if not reply.stream and delay.is_noop:
            flow.response = http.Response.make(
                reply.status, reply.body, {"content-type": reply.content_type, **reply.headers}
            )
            return
        state.played = self.stream_server.register(Playback(reply, delay))
        req = flow.request
        req.scheme, req.host, req.port = "http", "127.0.0.1", self.stream_server.port
        req.method, req.path, req.content = "GET", state.played, b""

    def _delay(self, state: CallState, reply: VendorReply) -> DelayRule:
        record, state.recording = state.recording, None
        rule = self._timing(record)
        if record is not None and record.stream and record.outcome in CUT_OUTCOMES:
            # The arm saw this stream break: it sees it break again, after the same bytes.
            rule = rule.model_copy(update={"cut_after_chunks": len(reply.chunks)})
        return rule

    def _timing(self, record: CallRecord | None) -> DelayRule:
        first_byte = record.timing.first_byte if record is not None else None
        if not self.timing or record is None or first_byte is None:
            return DelayRule()
        timing = record.timing
        first_byte_ms = max(0.0, (first_byte - timing.start) * 1000)
        chunks = len(record.response_chunks or []) if record.stream else 0
        chunk_ms = 0.0
        if chunks > 1 and timing.end is not None:
            chunk_ms = max(0.0, (timing.end - first_byte) * 1000 / (chunks - 1))
        return DelayRule(first_byte_ms=first_byte_ms, chunk_ms=chunk_ms)

    def close(self) -> None:
        for miss in self.misses:
            # Listed again at the end, where a reader of the proxy log looks first.
            log.error(
                "replay miss",
                seq=miss.seq,
                arm=miss.arm,
                route=miss.route,
                request_hash=miss.request_hash,
            )
        if self.bodies is not None:
            self.bodies.close()


def _split(body: bytes, sizes: list[int] | None) -> list[bytes]:
    """The body cut as it was sent; a remainder the sizes do not cover (a cut stream's tail
    recorded differently) goes out as one last chunk rather than being lost."""
    if not sizes:
        return [body]
    chunks, offset = [], 0
    for size in sizes:
        if offset >= len(body):
            break
        chunks.append(body[offset : offset + size])
        offset += size
    if offset < len(body):
        chunks.append(body[offset:])
    return [c for c in chunks if c] or [body]


def _content_type(record: CallRecord) -> str:
    # Live-mode records do not keep the vendor's content type; the vendors send these.
    return "text/event-stream; charset=utf-8" if record.stream else "application/json"
