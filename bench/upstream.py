"""A minimal local upstream for the proxy benchmarks: fixed JSON replies, and a paced SSE stream.

It stands in for a vendor so a bare `mitmdump --mode reverse` has something to relay, and so a
direct call shows what the client and the loopback cost on their own. It is a `bench.miniserver`
protocol (no HTTP library) so that it costs as little CPU as possible and the figures measure the
proxies, not this server.

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
import struct
import sys
from urllib.parse import parse_qs, urlsplit

from bench.miniserver import (
    LAST_CHUNK,
    MiniProtocol,
    chat_completion,
    http_chunk,
    openai_usage,
    response,
    serve,
)

CHAT_BODY = chat_completion("gpt-4o-mini", openai_usage(12, 16))

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


CHAT_RESPONSE = response("200 OK", CHAT_BODY)
EMBEDDING_RESPONSE = response("200 OK", EMBEDDING_BODY)
NOT_FOUND = response("404 Not Found", b'{"error":"unknown route"}')


class UpstreamProtocol(MiniProtocol):
    def answer(self, method: str, target: str, body: bytes) -> None:
        url = urlsplit(target)
        if method == "POST" and url.path.endswith("/chat/completions"):
            self.write(CHAT_RESPONSE)
        elif method == "POST" and url.path.endswith("/embeddings"):
            self.write(EMBEDDING_RESPONSE)
        elif url.path == "/stream":
            query = parse_qs(url.query)
            chunks = int(query.get("chunks", ["12"])[0])
            chunk_ms = float(query.get("chunk_ms", ["20"])[0])
            self.stream(self._stream(chunks, chunk_ms))
        else:
            self.write(NOT_FOUND)

    async def _stream(self, chunks: int, chunk_ms: float) -> None:
        self.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            b"cache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n"
        )
        for index in range(chunks):
            if index:
                await asyncio.sleep(chunk_ms / 1000)
            self.write(http_chunk(_EVENT if index < chunks - 1 else b"data: [DONE]\n\n"))
        self.write(LAST_CHUNK)


if __name__ == "__main__":
    asyncio.run(serve(UpstreamProtocol, int(sys.argv[1]) if len(sys.argv) > 1 else 0))
