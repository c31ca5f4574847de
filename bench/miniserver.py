"""The HTTP/1.1 server under `bench.upstream` and `bench.vendor_upstream`: a plain
`asyncio.Protocol` (no HTTP library) with replies built once at start-up, so that it costs as
little CPU as possible and the figures measure the proxies in front of it, not this server.

A subclass answers each parsed request in `answer`; `serve` prints `PORT <n>` once it listens and
runs until SIGINT or SIGTERM. `chat_completion` is the OpenAI reply both upstreams give.
"""

from __future__ import annotations

import asyncio
import json
import signal
from collections.abc import Callable, Coroutine
from typing import Any

# The last chunk of a chunked body (no trailers).
LAST_CHUNK = b"0\r\n\r\n"


def openai_usage(prompt_tokens: int, completion_tokens: int) -> dict[str, Any]:
    """An OpenAI chat `usage` object, every detail field present as the vendor sends it."""
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def chat_completion(model: str, usage: dict[str, Any]) -> bytes:
    """A compact `chat.completion` body about the size of a stub's reply."""
    body = {
        "id": "chatcmpl-bench0000000000000000000",
        "object": "chat.completion",
        "created": 1735689600,
        "model": model,
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
        "usage": usage,
        "service_tier": "default",
        "system_fingerprint": "fp_5t0b5e1f2a",
    }
    return json.dumps(body, separators=(",", ":")).encode()


def response(status: str, body: bytes, content_type: str = "application/json") -> bytes:
    """A whole `content-length` response, ready to write."""
    head = (
        f"HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


def http_chunk(data: bytes) -> bytes:
    """`data` framed as one chunk of a `transfer-encoding: chunked` body."""
    return b"%x\r\n%s\r\n" % (len(data), data)


class MiniProtocol(asyncio.Protocol):
    """One connection: parses keep-alive (and pipelined) requests with `content-length` bodies
    and hands each to `answer`. A streamed reply runs as a task, cancelled if the client goes."""

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
            self.answer(method, target, body)

    def write(self, data: bytes) -> None:
        assert self.transport is not None
        self.transport.write(data)

    def stream(self, writer: Coroutine[Any, Any, None]) -> None:
        """Run a streamed reply's writes as a task of this connection."""
        self.streaming = asyncio.create_task(writer)

    def answer(self, method: str, target: str, body: bytes) -> None:
        raise NotImplementedError


async def serve(protocol: Callable[[], asyncio.Protocol], port: int = 0) -> None:
    """Listen on 127.0.0.1:`port` (0: any free port), print `PORT <n>`, serve until a signal."""
    loop = asyncio.get_running_loop()
    server = await loop.create_server(protocol, "127.0.0.1", port)
    print(f"PORT {server.sockets[0].getsockname()[1]}", flush=True)
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    server.close()
