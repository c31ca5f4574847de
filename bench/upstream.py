"""A minimal local upstream for the proxy benchmarks: fixed JSON replies, and a paced SSE stream.

It stands in for a vendor so a bare `mitmdump --mode reverse` has something to relay, and so a
direct call shows what the client and the loopback cost on their own. It is a plain
`asyncio.Protocol` (no HTTP library) so that it costs as little CPU as possible and the figures
measure the proxies, not this server.

Run: `python -m bench.upstream` prints `PORT <n>` once it listens; SIGINT or SIGTERM stops it.
Routes (the path prefix is ignored, so `/openai/v1/...` works as well as `/v1/...`):
  POST .../chat/completions   a fixed chat.completion body about the size of a stub's reply
  POST .../embeddings         a fixed base64 embedding body about the size of a stub's reply
  GET  /stream?chunks=N&chunk_ms=M   N SSE events, chunked, M ms apart (the first at once)
"""

from __future__ import annotations

import asyncio
import base64
import json
import signal
import struct
import sys
from urllib.parse import parse_qs, urlsplit

CHAT_BODY = json.dumps(
    {
        "id": "chatcmpl-bench0000000000000000000",
        "object": "chat.completion",
        "created": 1735689600,
        "model": "gpt-4o-mini",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": "Thanks for telling me. To recap: Hello, this is bench request 0",
                    "refusal": None,
                    "annotations": [],
                },
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": 12,
            "completion_tokens": 16,
            "total_tokens": 28,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": 0,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        },
        "service_tier": "default",
        "system_fingerprint": "fp_5t0b5e1f2a",
    },
    separators=(",", ":"),
).encode()

_VECTOR = struct.pack("<1536f", *([0.0255] * 1536))
EMBEDDING_BODY = json.dumps(
    {
        "object": "list",
        "data": [
            {
                "object": "embedding",
                "index": 0,
                "embedding": base64.b64encode(_VECTOR).decode(),
            }
        ],
        "model": "text-embedding-3-small",
        "usage": {"prompt_tokens": 8, "total_tokens": 8},
    },
    separators=(",", ":"),
).encode()

_EVENT = (
    b'data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1735689600,'
    b'"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"a few words"},'
    b'"logprobs":null,"finish_reason":null}]}\n\n'
)


def _response(status: str, body: bytes, content_type: str = "application/json") -> bytes:
    head = (
        f"HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


CHAT_RESPONSE = _response("200 OK", CHAT_BODY)
EMBEDDING_RESPONSE = _response("200 OK", EMBEDDING_BODY)
NOT_FOUND = _response("404 Not Found", b'{"error":"unknown route"}')


class UpstreamProtocol(asyncio.Protocol):
    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = b""
        self.streaming: asyncio.Task[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def connection_lost(self, exc: Exception | None) -> None:
        if self.streaming:
            self.streaming.cancel()

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            lines = self.buffer[:end].decode("latin-1").split("\r\n")
            method, target, _ = lines[0].split(" ", 2)
            length = 0
            for line in lines[1:]:
                name, _, value = line.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            if len(self.buffer) < end + 4 + length:
                return
            self.buffer = self.buffer[end + 4 + length :]
            self._answer(method, target)

    def _answer(self, method: str, target: str) -> None:
        assert self.transport is not None
        url = urlsplit(target)
        if method == "POST" and url.path.endswith("/chat/completions"):
            self.transport.write(CHAT_RESPONSE)
        elif method == "POST" and url.path.endswith("/embeddings"):
            self.transport.write(EMBEDDING_RESPONSE)
        elif url.path == "/stream":
            query = parse_qs(url.query)
            chunks = int(query.get("chunks", ["12"])[0])
            chunk_ms = float(query.get("chunk_ms", ["20"])[0])
            self.streaming = asyncio.create_task(self._stream(chunks, chunk_ms))
        else:
            self.transport.write(NOT_FOUND)

    async def _stream(self, chunks: int, chunk_ms: float) -> None:
        assert self.transport is not None
        self.transport.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            b"cache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n"
        )
        for index in range(chunks):
            if index:
                await asyncio.sleep(chunk_ms / 1000)
            event = _EVENT if index < chunks - 1 else b"data: [DONE]\n\n"
            self.transport.write(b"%x\r\n%s\r\n" % (len(event), event))
        self.transport.write(b"0\r\n\r\n")


async def serve(port: int = 0) -> None:
    loop = asyncio.get_running_loop()
    server = await loop.create_server(UpstreamProtocol, "127.0.0.1", port)
    print(f"PORT {server.sockets[0].getsockname()[1]}", flush=True)
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    server.close()


if __name__ == "__main__":
    asyncio.run(serve(int(sys.argv[1]) if len(sys.argv) > 1 else 0))
