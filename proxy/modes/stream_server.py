"""An in-process HTTP/1.1 upstream that plays prepared stub replies chunk by chunk.

mitmproxy sends a response that an addon sets in the `request` hook as one body, so it cannot
stream, delay between chunks or stall mid-stream (see `HttpStream.send_response` in
mitmproxy/proxy/layers/http). Record mode therefore routes streamed and delayed replies to this
server, which mitmproxy relays with `flow.response.stream = True`: the arm sees real chunked
streaming, and a client that gives up closes the upstream connection, which ends the playback.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass

import h11

from stubs.rules import DelayRule
from vendors.reply import VendorReply

PLAY_PREFIX = "/_harness_play/"


@dataclass
class Playback:
    reply: VendorReply
    delay: DelayRule


class StreamServer:
    def __init__(self) -> None:
        self._pending: dict[str, Playback] = {}
        self._server: asyncio.Server | None = None
        self._counter = 0
        self.port = 0

    def register(self, playback: Playback) -> str:
        """Park a reply; returns the path the flow must request to play it."""
        self._counter += 1
        token = str(self._counter)
        self._pending[token] = playback
        return PLAY_PREFIX + token

    def discard(self, path: str) -> None:
        self._pending.pop(path.removeprefix(PLAY_PREFIX), None)

    async def start(self, port: int = 0) -> int:
        """Listen on 127.0.0.1:`port` (0: any free port). A backend that confines the proxy's
        own traffic names the port, so its rule can allow exactly this one on loopback."""
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 1)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn = h11.Connection(h11.SERVER)
        try:
            while True:
                request = await self._next_request(conn, reader)
                if request is None:
                    return
                playback = self._pending.pop(
                    request.target.decode().removeprefix(PLAY_PREFIX), None
                )
                if playback is None:
                    await self._send(
                        writer,
                        conn,
                        h11.Response(status_code=404, headers=[("content-length", "0")]),
                    )
                    await self._send(writer, conn, h11.EndOfMessage())
                else:
                    await self._play(reader, writer, conn, playback)
                if conn.our_state is h11.MUST_CLOSE:
                    return
                conn.start_next_cycle()
        except (ConnectionError, h11.ProtocolError, asyncio.IncompleteReadError):
            return
        except asyncio.CancelledError:
            # Shutdown cancels open connections. Swallowing it here avoids Python 3.11's noisy
            # "Exception in callback StreamReaderProtocol" log for a task that was cancelled.
            return
        finally:
            writer.close()

    async def _next_request(
        self, conn: h11.Connection, reader: asyncio.StreamReader
    ) -> h11.Request | None:
        request = None
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                data = await reader.read(65536)
                conn.receive_data(data)
                if not data and conn.their_state is not h11.DONE:
                    return None
                continue
            if isinstance(event, h11.Request):
                request = event
            elif isinstance(event, h11.EndOfMessage):
                return request
            elif isinstance(event, h11.ConnectionClosed):
                return None

    async def _send(
        self,
        writer: asyncio.StreamWriter,
        conn: h11.Connection,
        event: h11.Response | h11.Data | h11.EndOfMessage,
    ) -> None:
        data = conn.send(event)
        if data:
            writer.write(data)
            await writer.drain()

    async def _play(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        conn: h11.Connection,
        pb: Playback,
    ) -> None:
        reply, delay = pb.reply, pb.delay
        if delay.hang_before_headers:
            await _until_closed(reader)
        if delay.first_byte_ms:
            await asyncio.sleep(delay.first_byte_ms / 1000)
        headers = [("content-type", reply.content_type), *reply.headers.items()]
        if reply.stream:
            headers += [("transfer-encoding", "chunked"), ("cache-control", "no-cache")]
        else:
            headers.append(("content-length", str(len(reply.body))))
        await self._send(writer, conn, h11.Response(status_code=reply.status, headers=headers))
        cut = delay.cut_after_chunks
        for index, chunk in enumerate(reply.chunks):
            if cut is not None and index >= cut:
                break
            if delay.stall_after_chunks is not None and index >= delay.stall_after_chunks:
                await _until_closed(reader)
            if index and delay.chunk_ms:
                await asyncio.sleep(delay.chunk_ms / 1000)
            await self._send(writer, conn, h11.Data(data=chunk))
        if cut is not None:
            # No terminating chunk: the reader sees the body end early, as from a dead vendor.
            writer.transport.abort()
            return
        await self._send(writer, conn, h11.EndOfMessage())


async def _until_closed(reader: asyncio.StreamReader) -> None:
    """Hold the connection open, sending nothing, until the other side closes it."""
    while await reader.read(65536):
        pass
    raise ConnectionError("the client went away while the stub was hanging")
