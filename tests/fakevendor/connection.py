"""One client connection of the fake vendor: HTTP/1.1 with h11 over asyncio streams, so the fake
controls the socket (cut a chunked body short, reset, trickle, stall) and sees the client leave.

While a reply is being sent a watcher reads the socket: EOF or an error there means the client
closed the connection. Bytes the client sends meanwhile (a next request) are kept for h11.
"""

from __future__ import annotations

import asyncio
import json
import math
import socket
import struct
import time
from collections.abc import Callable
from typing import Protocol

import h11

from stubs.rules.context import StubContext
from tests.fakevendor.behaviour import Behaviour, BehaviourError
from tests.fakevendor.echo import apply_echo
from tests.fakevendor.records import Outcome, ReceivedRequest, Served, key_of
from tests.fakevendor.replies import Event, PlannedReply, _error, plan_reply, vendor_of

_READ = 65536
_MAX_BODY = 64 * 1024 * 1024


class Observer(Protocol):
    """What the connection reports to (and asks of) the FakeVendor that owns it."""

    ctx: StubContext
    count_tokens: Callable[[str], int]
    api_keys: dict[str, str]

    def admit(self, header: str | None) -> tuple[str, Behaviour | BehaviourError]: ...
    def record_request(self, request: ReceivedRequest) -> None: ...
    def open_served(self, served: Served) -> None: ...
    def sent(self, served: Served, event: Event, nbytes: int) -> None: ...
    def close_served(self, served: Served, outcome: Outcome) -> None: ...


class ClientGone(Exception):
    """The client closed the connection (or it broke) while a reply was being sent."""


class _Closed(Exception):
    """The fake itself ended the connection on purpose (cut or reset)."""


class Connection:
    def __init__(
        self, observer: Observer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        self.observer = observer
        self.reader = reader
        self.writer = writer
        self.h11 = h11.Connection(h11.SERVER, max_incomplete_event_size=_MAX_BODY)
        self.gone: asyncio.Task[None] | None = None

    async def serve(self) -> None:
        try:
            while True:
                request = await self._read_request()
                if request is None:
                    return
                await self._answer(*request)
                if self.h11.our_state is not h11.DONE or self.h11.their_state is not h11.DONE:
                    return
                self.h11.start_next_cycle()
        except (_Closed, ClientGone, ConnectionError, h11.ProtocolError):
            return
        finally:
            if self.gone is not None:
                self.gone.cancel()
            if not self.writer.transport.is_closing():
                self.writer.close()

    # -- reading -------------------------------------------------------------------------------

    async def _next_event(self) -> object:  # an h11 Event, or PAUSED at the end of a cycle
        while True:
            event = self.h11.next_event()
            if event is not h11.NEED_DATA:
                return event
            self.h11.receive_data(await self.reader.read(_READ))

    async def _read_request(self) -> tuple[h11.Request, bytes] | None:
        event = await self._next_event()
        if not isinstance(event, h11.Request):
            return None  # ConnectionClosed (the client is done with a keep-alive connection)
        body = bytearray()
        while True:
            part = await self._next_event()
            if isinstance(part, h11.Data):
                body += part.data
            elif isinstance(part, h11.EndOfMessage):
                return event, bytes(body)
            else:
                return None

    async def _watch(self) -> None:
        """Returns when the client closes the connection; keeps what it sends meanwhile."""
        while True:
            try:
                data = await self.reader.read(_READ)
            except (ConnectionError, OSError):
                return
            if not data:
                return
            self.h11.receive_data(data)

    # -- answering -----------------------------------------------------------------------------

    async def _answer(self, request: h11.Request, raw: bytes) -> None:
        target = request.target.decode("latin-1")
        path, _, query = target.partition("?")
        raw_headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in request.headers]
        headers = {k.lower(): v for k, v in raw_headers}
        method = request.method.decode("ascii")
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        request_id, behaviour = self.observer.admit(headers.get("x-fake-behaviour"))
        self.observer.record_request(
            ReceivedRequest(
                id=request_id,
                method=method,
                path=path,
                query=query,
                headers=headers,
                raw_headers=raw_headers,
                body=body,
                raw_body=raw,
                behaviour=behaviour.source if isinstance(behaviour, Behaviour) else str(behaviour),
                time=time.time(),
                monotonic=time.monotonic(),
            )
        )
        vendor = vendor_of(path, headers)
        if isinstance(behaviour, BehaviourError):
            planned = _error(vendor, 400, f"fake vendor: {behaviour}", None)
            behaviour = Behaviour()
        elif (expected := self.observer.api_keys.get(vendor)) is not None and key_of(
            headers
        ) != expected:
            planned = _error(vendor, 401, "fake vendor: invalid x-api-key / bearer token", None)
        else:
            if method == "GET":
                body = {}
            planned = plan_reply(method, path, headers, body, behaviour, self.observer.ctx)
        try:
            planned = apply_echo(planned, behaviour, key_of(headers))
        except BehaviourError as e:
            planned = _error(vendor, 400, f"fake vendor: {e}", None)
        served = Served(
            request_id=request_id,
            route=planned.route,
            model=planned.model,
            status=planned.status,
            stream=planned.stream,
            input_tokens=planned.input_tokens if planned.status == 200 else 0,
            cache_read_tokens=planned.cache_read_tokens if planned.status == 200 else 0,
            cache_write_tokens=planned.cache_write_tokens if planned.status == 200 else 0,
            full_output_tokens=planned.full_output_tokens,
            events_total=len(planned.events),
            started=time.monotonic(),
        )
        self.observer.open_served(served)
        self.gone = asyncio.ensure_future(self._watch())
        try:
            outcome = await self._send(planned, behaviour, served)
        except ClientGone:
            self.observer.close_served(served, "disconnected")
            raise
        except asyncio.CancelledError:
            self.observer.close_served(served, "stopped")
            raise
        except _Closed as closed:
            self.observer.close_served(served, closed.args[0])
            raise
        finally:
            self.gone.cancel()
            self.gone = None
        self.observer.close_served(served, outcome)

    async def _pause(self, seconds: float) -> None:
        assert self.gone is not None
        if seconds <= 0 and not self.gone.done():
            return
        timeout = None if math.isinf(seconds) else seconds
        done, _ = await asyncio.wait({self.gone}, timeout=timeout)
        if done:
            raise ClientGone

    async def _write(self, data: bytes) -> None:
        assert self.gone is not None
        if self.gone.done():
            raise ClientGone
        self.writer.write(data)
        try:
            await self.writer.drain()
        except (ConnectionError, OSError) as e:
            raise ClientGone from e

    async def _trickle(self, data: bytes, interval: float) -> None:
        for i in range(len(data)):
            await self._write(data[i : i + 1])
            await self._pause(interval)

    def _cut(self) -> None:
        # The body stays unfinished (no final chunk): the client's parser sees a broken stream.
        self.writer.close()
        raise _Closed("cut")

    def _reset(self) -> None:
        sock = self.writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.writer.transport.abort()
        raise _Closed("reset")

    async def _send(self, planned: PlannedReply, behaviour: Behaviour, served: Served) -> Outcome:
        if behaviour.reset:
            self._reset()
        await self._pause(math.inf if behaviour.hang else behaviour.first_byte_delay)
        trickle = behaviour.trickle
        headers = [("content-type", planned.content_type), *planned.headers]
        if planned.stream:
            headers.append(("cache-control", "no-cache"))
        elif trickle is None and not behaviour.chunked:
            # A plain body has a length; streams and trickles are chunked so they can end early.
            headers.append(("content-length", str(sum(len(e.data) for e in planned.events))))
        head = self.h11.send(
            h11.Response(status_code=planned.status, headers=headers, reason=planned.reason)
        )
        assert head is not None
        await self._write(head)
        served.first_byte = time.monotonic()
        stop_kind, stop_at = behaviour.interruption or ("", -1)
        # Never the terminal event: a plain body is interrupted right after its headers.
        stop_at = min(stop_at, len(planned.events) - 1)
        if behaviour.cut_bytes is not None and not planned.stream:
            # Part of a plain body, then close: short of its length, or without the last chunk.
            part = self.h11.send(h11.Data(data=planned.events[0].data[: behaviour.cut_bytes]))
            await self._write(part or b"")
            self._cut()
        for index, event in enumerate(planned.events):
            if index == stop_at:
                if stop_kind == "cut":
                    self._cut()
                if stop_kind == "reset":
                    self._reset()
                await self._pause(math.inf)  # stall: keep the connection, send nothing
            if index > 0:
                await self._pause(behaviour.chunk_delay)
            framed = self.h11.send(h11.Data(data=event.data))
            assert framed is not None
            if trickle is not None:
                await self._trickle(framed, trickle)
            elif event.split_at is not None:
                # Two writes with a pause between: the reader gets the key in two pieces.
                at = framed.index(event.data) + event.split_at
                await self._write(framed[:at])
                await self._pause(0.02)
                await self._write(framed[at:])
            else:
                await self._write(framed)
            self.observer.sent(served, event, len(event.data))
        if trickle is not None:
            # Pad forever with bytes that keep the body unfinished but harmless to a parser.
            pad = b":" if planned.stream else b" "
            while True:
                framed = self.h11.send(h11.Data(data=pad))
                assert framed is not None
                await self._trickle(framed, trickle)
        tail = self.h11.send(h11.EndOfMessage())
        if tail:
            await self._write(tail)
        return "complete"
