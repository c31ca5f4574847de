"""A fast minimal OpenAI-format upstream for the live-mode bench: the proxy forwards to it and
meters the usage it reports.

`tests/fakevendor` speaks every format and misbehaves on demand, which costs CPU per call; a bench
needs the opposite, an upstream whose cost is small next to the proxies it stands behind. Like
`bench.upstream`, this is a `bench.miniserver` protocol with replies built once at start-up.

Run: `python -m bench.vendor_upstream [--chunks 10] [--chunk-ms 20]` prints `PORT <n>` once it
listens; SIGINT or SIGTERM stops it. Routes (any path prefix):
  POST .../chat/completions   a fixed `chat.completion` for gpt-4.1-mini, with `usage`
  the same with `"stream":true` in the body: `--chunks` SSE writes `--chunk-ms` apart (the first
      at once), each one HTTP chunk: content deltas, then the finish chunk, the choice-less usage
      chunk (as `stream_options.include_usage` asks) and `data: [DONE]` in the last write

`--timing-log PATH`: for each streamed reply whose request carries `bench stream TAG` in its
text, one line `TAG RECEIVED LAST_WRITE` (`time.perf_counter()`, CLOCK_MONOTONIC on Linux, so the
client's readings of the same clock compare): when the request had been read and when the reply's
last byte was written. The client subtracts the upstream's own span from its end-to-end time, so
a proxy's added time is measured on the same stream, free of the pacing sleeps' jitter (which
otherwise moves two streams' ends apart by more than a proxy adds).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import time
from typing import Any, ClassVar

from bench.miniserver import (
    LAST_CHUNK,
    MiniProtocol,
    chat_completion,
    http_chunk,
    openai_usage,
    response,
    serve,
)

MODEL = "gpt-4.1-mini"
USAGE = openai_usage(14, 16)
STREAM_TAG = re.compile(rb"bench stream ([\w.-]+)")


def _json(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


CHAT_BODY = chat_completion(MODEL, USAGE)


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
    return [http_chunk(e) for e in events]


CHAT_RESPONSE = response("200 OK", CHAT_BODY)
NOT_FOUND = response("404 Not Found", b'{"error":{"message":"unknown route"}}')
STREAM_HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\n"
    b"cache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n"
)


class VendorProtocol(MiniProtocol):
    # Set once by `main` before the server starts.
    writes: ClassVar[list[bytes]] = []
    chunk_s: ClassVar[float] = 0.02
    timing_log: ClassVar[Any] = None  # an open text file, with --timing-log

    def answer(self, method: str, target: str, body: bytes) -> None:
        received = time.perf_counter()
        path = target.split("?", 1)[0]
        if method != "POST" or not path.endswith("/chat/completions"):
            self.write(NOT_FOUND)
        elif b'"stream":true' in body.replace(b" ", b""):
            tag = STREAM_TAG.search(body)
            self.stream(self._stream(tag.group(1).decode() if tag else None, received))
        else:
            self.write(CHAT_RESPONSE)

    async def _stream(self, tag: str | None, received: float) -> None:
        self.write(STREAM_HEAD + self.writes[0])
        for write in self.writes[1:]:
            await asyncio.sleep(self.chunk_s)
            self.write(write)
        self.write(LAST_CHUNK)
        if tag is not None and self.timing_log is not None:
            self.timing_log.write(f"{tag} {received:.6f} {time.perf_counter():.6f}\n")
            self.timing_log.flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--chunks", type=int, default=10, help="SSE writes per streamed reply")
    parser.add_argument("--chunk-ms", type=float, default=20.0, help="pause between writes")
    parser.add_argument("--timing-log", help="append each tagged stream's timing here")
    args = parser.parse_args()
    VendorProtocol.writes = stream_writes(args.chunks)
    VendorProtocol.chunk_s = args.chunk_ms / 1000
    if args.timing_log:
        VendorProtocol.timing_log = open(args.timing_log, "a", encoding="utf-8")  # noqa: SIM115
    asyncio.run(serve(VendorProtocol, args.port))


if __name__ == "__main__":
    main()
