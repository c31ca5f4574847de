"""A fast minimal OpenAI-format upstream for the live-mode bench: the proxy forwards to it and
meters the usage it reports.

`tests/fakevendor` speaks every format and misbehaves on demand, which costs CPU per call; a bench
needs the opposite, an upstream whose cost is small next to the proxies it stands behind. Like
`bench.upstream`, this is a plain `asyncio.Protocol` with replies built once at start-up.

Run: `python -m bench.vendor_upstream [--chunks 10] [--chunk-ms 20]` prints `PORT <n>` once it
listens; SIGINT or SIGTERM stops it. Routes (any path prefix):
  POST .../chat/completions   a fixed `chat.completion` for gpt-4.1-mini, with `usage`
  the same with `"stream":true` in the body: `--chunks` SSE writes `--chunk-ms` apart (the first
      at once), each one HTTP chunk: content deltas, then the finish chunk, the choice-less usage
      chunk (as `stream_options.include_usage` asks) and `data: [DONE]` in the last write
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
from typing import Any, ClassVar

MODEL = "gpt-4.1-mini"
USAGE = {
    "prompt_tokens": 14,
    "completion_tokens": 16,
    "total_tokens": 30,
    "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
    "completion_tokens_details": {
        "reasoning_tokens": 0,
        "audio_tokens": 0,
        "accepted_prediction_tokens": 0,
        "rejected_prediction_tokens": 0,
    },
}


def _json(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


CHAT_BODY = _json(
    {
        "id": "chatcmpl-bench0000000000000000000",
        "object": "chat.completion",
        "created": 1735689600,
        "model": MODEL,
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
        "usage": USAGE,
        "service_tier": "default",
        "system_fingerprint": "fp_5t0b5e1f2a",
    }
)


def _chunk(choices: list[dict[str, Any]], usage: dict[str, Any] | None = None) -> bytes:
    event: dict[str, Any] = {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 1735689600,
        "model": MODEL,
        "choices": choices,
    }
    if usage is not None:
        event["usage"] = usage
    return b"data: " + _json(event) + b"\n\n"


def stream_writes(chunks: int) -> list[bytes]:
    """The SSE body as `chunks` writes (at least 2), each framed as one HTTP chunk."""
    chunks = max(2, chunks)
    delta = {"index": 0, "delta": {"content": "a few words"}, "logprobs": None}
    events = [_chunk([{**delta, "delta": {"role": "assistant", "content": ""}}])]
    events += [_chunk([{**delta, "finish_reason": None}]) for _ in range(chunks - 2)]
    events.append(
        _chunk([{"index": 0, "delta": {}, "logprobs": None, "finish_reason": "stop"}])
        + _chunk([], USAGE)
        + b"data: [DONE]\n\n"
    )
    return [b"%x\r\n%s\r\n" % (len(e), e) for e in events]


def _response(status: str, body: bytes) -> bytes:
    head = f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
    return head.encode() + b"\r\n" + body


CHAT_RESPONSE = _response("200 OK", CHAT_BODY)
NOT_FOUND = _response("404 Not Found", b'{"error":{"message":"unknown route"}}')
STREAM_HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\n"
    b"cache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n"
)


class VendorProtocol(asyncio.Protocol):
    # Set once by `serve` before the first connection.
    writes: ClassVar[list[bytes]] = []
    chunk_s: ClassVar[float] = 0.02

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
            body = self.buffer[end + 4 : end + 4 + length]
            self.buffer = self.buffer[end + 4 + length :]
            self._answer(method, target.split("?", 1)[0], body)

    def _answer(self, method: str, path: str, body: bytes) -> None:
        assert self.transport is not None
        if method != "POST" or not path.endswith("/chat/completions"):
            self.transport.write(NOT_FOUND)
        elif b'"stream":true' in body.replace(b" ", b""):
            self.streaming = asyncio.create_task(self._stream())
        else:
            self.transport.write(CHAT_RESPONSE)

    async def _stream(self) -> None:
        assert self.transport is not None
        self.transport.write(STREAM_HEAD + self.writes[0])
        for write in self.writes[1:]:
            await asyncio.sleep(self.chunk_s)
            self.transport.write(write)
        self.transport.write(b"0\r\n\r\n")


async def serve(port: int, chunks: int, chunk_ms: float) -> None:
    VendorProtocol.writes = stream_writes(chunks)
    VendorProtocol.chunk_s = chunk_ms / 1000
    loop = asyncio.get_running_loop()
    server = await loop.create_server(VendorProtocol, "127.0.0.1", port)
    print(f"PORT {server.sockets[0].getsockname()[1]}", flush=True)
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    server.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--chunks", type=int, default=10, help="SSE writes per streamed reply")
    parser.add_argument("--chunk-ms", type=float, default=20.0, help="pause between writes")
    args = parser.parse_args()
    asyncio.run(serve(args.port, args.chunks, args.chunk_ms))


if __name__ == "__main__":
    main()
