"""The one load client every benchmark target gets: raw HTTP/1.1 over asyncio streams, keep-alive.

No HTTP library sits in the measured path (an SDK or httpx costs more CPU per call than the proxies
being compared, and on two cores the client competes with them for CPU). The same code drives the
direct upstream, the bare mitmdump reverse proxy and the harness stub proxy, so only the server
side differs between their figures.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Reply:
    status: int
    body: bytes  # after de-chunking
    sent: float  # perf_counter when the request was written
    head: float  # when the response head had arrived (time to first byte)
    first_data: float | None  # when the first body bytes had arrived
    end: float  # when the last byte had arrived
    chunk_times: list[float] = field(default_factory=list)

    @property
    def latency(self) -> float:
        return self.end - self.sent


class Connection:
    """One keep-alive HTTP/1.1 connection; reconnects if the server closed it."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def _connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        if self.reader is None or self.writer is None or self.writer.is_closing():
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        return self.reader, self.writer

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            with contextlib.suppress(ConnectionError):
                await self.writer.wait_closed()
            self.reader = self.writer = None

    async def request(
        self, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None
    ) -> Reply:
        reused = self.writer is not None
        reader, writer = await self._connect()
        extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        head = (
            f"{method} {path} HTTP/1.1\r\nhost: {self.host}:{self.port}\r\n"
            f"content-type: application/json\r\ncontent-length: {len(body)}\r\n{extra}\r\n"
        )
        sent = time.perf_counter()
        writer.write(head.encode() + body)
        try:
            raw_head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError) as e:
            if not reused or (isinstance(e, asyncio.IncompleteReadError) and e.partial):
                raise
            # The server closed the idle keep-alive connection (uvicorn's timeout is 5 s, and
            # a stream round can leave one idle longer): open a new one, as an HTTP client does.
            await self.close()
            return await self.request(method, path, body, headers)
        head_at = time.perf_counter()
        lines = raw_head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        fields: dict[str, str] = {}
        for line in lines[1:]:
            if line:
                name, _, value = line.partition(":")
                fields[name.strip().lower()] = value.strip()
        parts: list[bytes] = []
        first_data: float | None = None
        chunk_times: list[float] = []
        if "content-length" in fields:
            parts.append(await reader.readexactly(int(fields["content-length"])))
            first_data = time.perf_counter()
        elif fields.get("transfer-encoding", "").lower() == "chunked":
            while True:
                chunk_size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
                if chunk_size == 0:
                    while await reader.readuntil(b"\r\n") != b"\r\n":
                        pass  # trailers
                    break
                parts.append((await reader.readexactly(chunk_size + 2))[:-2])
                now = time.perf_counter()
                chunk_times.append(now)
                if first_data is None:
                    first_data = now
        else:
            parts.append(await reader.read())
            first_data = time.perf_counter()
            await self.close()
        end = time.perf_counter()
        if fields.get("connection", "").lower() == "close":
            await self.close()
        return Reply(status, b"".join(parts), sent, head_at, first_data, end, chunk_times)


# A request factory gets the request's sequence number so each request can differ.
RequestFactory = Callable[[int], tuple[str, str, bytes, dict[str, str]]]


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0..100) by the nearest-rank method."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(q / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]


async def sequential(
    host: str, port: int, make: RequestFactory, count: int, warmup: int, max_seconds: float
) -> list[float]:
    """Latencies (seconds) of `count` back-to-back requests on one keep-alive connection, fewer
    if they take more than `max_seconds` after the warm-up (a loaded machine must not stretch
    the bench without bound)."""
    conn = Connection(host, port)
    latencies: list[float] = []
    deadline = float("inf")
    try:
        for i in range(warmup + count):
            if i == warmup:
                deadline = time.perf_counter() + max_seconds
            elif time.perf_counter() > deadline:
                break
            try:
                reply = await asyncio.wait_for(conn.request(*make(i)), REQUEST_TIMEOUT_S)
            except TimeoutError as e:
                # A stalled call fails the bench with its name rather than hanging it.
                raise RuntimeError(
                    f"{host}:{port} sent no reply to request {i} in {REQUEST_TIMEOUT_S} s"
                ) from e
            if reply.status != 200:
                raise RuntimeError(f"{host}:{port} answered {reply.status} to request {i}")
            if i >= warmup:
                latencies.append(reply.latency)
    finally:
        await conn.close()
    return latencies


@dataclass
class Throughput:
    calls: int  # completed inside the counted window
    seconds: float
    errors: int
    total_calls: int  # completed in the whole run, warm-up included
    latencies: list[float] = field(default_factory=list)  # seconds, the counted calls

    @property
    def per_second(self) -> float:
        return self.calls / self.seconds


# One call: in a concurrent load, longer counts as an error; in a sequential one, fails the bench.
REQUEST_TIMEOUT_S = 20.0


async def concurrent(
    host: str, port: int, make: RequestFactory, clients: int, warmup: float, duration: float
) -> Throughput:
    """Calls completed per second by `clients` keep-alive connections in a closed loop, counted
    over `duration` seconds after `warmup` seconds."""
    start = time.perf_counter()
    window = (start + warmup, start + warmup + duration)
    counted = [0]
    latencies: list[float] = []
    errors = [0]
    total = [0]
    sequence = iter(range(1_000_000_000))

    async def worker() -> None:
        conn = Connection(host, port)
        try:
            while time.perf_counter() < window[1]:
                try:
                    reply = await asyncio.wait_for(
                        conn.request(*make(next(sequence))), REQUEST_TIMEOUT_S
                    )
                except (TimeoutError, ConnectionError, asyncio.IncompleteReadError):
                    # A target that stalls or drops one call (LiteLLM on a saturated machine)
                    # costs that call, counted as an error, not the whole bench.
                    errors[0] += 1
                    await conn.close()
                    continue
                total[0] += 1
                if window[0] <= reply.end <= window[1]:
                    if reply.status == 200:
                        counted[0] += 1
                        latencies.append(reply.latency)
                    else:
                        errors[0] += 1
        finally:
            await conn.close()

    await asyncio.wait_for(
        asyncio.gather(*(worker() for _ in range(clients))), warmup + duration + 30
    )
    return Throughput(counted[0], duration, errors[0], total[0], latencies)
