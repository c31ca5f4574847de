"""The streamed call's added time (issue 23 item 6): the live metering proxy against a bare
`mitmdump --mode reverse` of the same mitmproxy, in the same run, on 50-event SSE streams.

Targets (each in front of one `bench.vendor_upstream` on loopback, reached by `bench.httpclient`):
  bare            `mitmdump -q --mode reverse:...` (buffers the reply, then sends it)
  bare_streaming  the same with `stream_large_bodies=1` (relays each chunk as it comes)
  metered         `harness proxy serve --mode live` with a ledger in a temp dir and a fake key

A stream's added time is its end-to-end time minus the upstream's own span for that very stream
(read -> last write, from the upstream's `--timing-log`): the request's forwarding plus the tail
after the upstream's last byte. Three ways of sending them, each in `--rounds` rounds that turn
the targets' order:
  back to back   one client, the next stream sent the instant the last one ended
  paced          one client, `--gap-ms` (20) between streams: a proxy's after-work hides there
  32 clients     `--clients` clients each sending streams back to back for `--duration` s
The upstream writes its events `--chunk-ms` apart (0: as fast as it can, so per-event work adds
up rather than hiding between events). Target: metered / bare <= 1.3 back to back.

Run: `.venv/bin/python -m bench.stream_bench [--rounds 3] [--streams 40] [--chunk-ms 0]`.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import sys
import tempfile
import time
from pathlib import Path
from statistics import mean, median

from bench.httpclient import Connection, Reply
from bench.live_bench import (
    ARM_HEADERS,
    MODEL,
    _path,
    start_metered,
    timing_log,
    upstream_times,
)
from bench.proxybench import (
    HOST,
    RESULTS,
    Launcher,
    Server,
    cpu_seconds,
    launched,
    mitmproxy_version,
    settle,
)

TARGETS = ["bare", "bare_streaming", "metered"]
MODES = ["back to back", "paced", "32 clients"]


def start(workdir: Path, args: argparse.Namespace, launch: Launcher) -> dict[str, Server]:
    pace = ["--chunks", str(args.chunks), "--chunk-ms", str(args.chunk_ms)]
    pace += ["--timing-log", str(timing_log(workdir))]
    upstream = launch.upstream("direct", [sys.executable, "-m", "bench.vendor_upstream", *pace])
    launch.bare_mitmdumps(upstream)
    start_metered(launch, workdir, upstream, args.proxy_src)
    return launch.wait_listening()


def request(target: str, tag: str) -> tuple[str, str, bytes, dict[str, str]]:
    """One streamed chat request whose text names it (`bench stream TAG`) for the timing log."""
    body = {
        "model": MODEL,
        "messages": [{"role": "user", "content": f"bench stream {tag}"}],
        "max_tokens": 64,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    return "POST", _path(target), json.dumps(body, separators=(",", ":")).encode(), ARM_HEADERS


class Streams:
    """Every stream sent, by (mode, target), with a tag unique in the run."""

    def __init__(self) -> None:
        self.sent: dict[tuple[str, str], list[tuple[str, Reply]]] = {}
        self.count = itertools.count()

    async def one(self, conn: Connection, mode: str, target: str) -> None:
        tag = f"{target}.{next(self.count)}"
        reply = await asyncio.wait_for(conn.request(*request(target, tag)), 30)
        if reply.status != 200 or b"[DONE]" not in reply.body:
            raise RuntimeError(f"{target}: a stream answered {reply.status} without [DONE]")
        self.sent.setdefault((mode, target), []).append((tag, reply))


async def run_sequential(
    streams: Streams, server: Server, target: str, mode: str, count: int, gap_s: float
) -> None:
    conn = Connection(HOST, server.port)
    try:
        for _ in range(count):
            await streams.one(conn, mode, target)
            if gap_s:
                await asyncio.sleep(gap_s)
    finally:
        await conn.close()


async def run_clients(
    streams: Streams, server: Server, target: str, clients: int, duration: float
) -> tuple[float, float]:
    """`clients` connections each sending streams back to back for `duration` seconds:
    streams/s, and the serving process's CPU per stream."""
    stop_at = time.perf_counter() + duration
    before = len(streams.sent.get(("32 clients", target), []))
    cpu0 = cpu_seconds(server.proc.pid)
    start_t = time.perf_counter()

    async def client() -> None:
        conn = Connection(HOST, server.port)
        try:
            while time.perf_counter() < stop_at:
                await streams.one(conn, "32 clients", target)
        finally:
            await conn.close()

    await asyncio.gather(*(client() for _ in range(clients)))
    elapsed = time.perf_counter() - start_t
    done = len(streams.sent[("32 clients", target)]) - before
    cpu = cpu_seconds(server.proc.pid) - cpu0
    return done / elapsed, cpu / max(1, done)


def added_ms(
    replies: list[tuple[str, Reply]], upstream: dict[str, tuple[float, float]]
) -> tuple[list[float], list[float]]:
    """Each stream's added time and, of it, the request's forwarding (the rest is the tail
    after the upstream's last write), in ms."""
    added, forward = [], []
    for tag, reply in replies:
        if tag in upstream:
            received, last = upstream[tag]
            added.append(((received - reply.sent) + (reply.end - last)) * 1000)
            forward.append((received - reply.sent) * 1000)
    return added, forward


async def measure(running: dict[str, Server], args: argparse.Namespace, workdir: Path) -> None:
    streams = Streams()
    rates: dict[str, list[float]] = {t: [] for t in TARGETS}
    # CPU per stream of the serving process, by (mode, target): steadier than wall times on a
    # loaded machine.
    cpus: dict[tuple[str, str], list[float]] = {}
    for t in TARGETS:  # warm-up: connections and code paths hot
        await run_sequential(streams, running[t], t, "warm", 5, 0)
    for r in range(args.rounds):
        shift = r % len(TARGETS)
        order = TARGETS[shift:] + TARGETS[:shift]
        block = max(1, args.streams // args.blocks)
        for mode, gap in (("back to back", 0.0), ("paced", args.gap_ms / 1000)):
            # In blocks, the targets taking turns: the machine's load drifts over seconds (other
            # work on it), and each target's streams then sample the same moments of it.
            for _ in range(args.blocks):
                for t in order:
                    before = cpu_seconds(running[t].proc.pid)
                    await run_sequential(streams, running[t], t, mode, block, gap)
                    used = (cpu_seconds(running[t].proc.pid) - before) / block
                    await settle(running[t].proc.pid)
                    cpus.setdefault((mode, t), []).append(used)
        for t in order:
            rate, cpu = await run_clients(streams, running[t], t, args.clients, args.duration)
            rates[t].append(rate)
            cpus.setdefault(("32 clients", t), []).append(cpu)
            await settle(running[t].proc.pid)
        print(f"  round {r + 1}/{args.rounds} done", flush=True)
    time.sleep(0.2)
    upstream = upstream_times(workdir)
    print(
        f"stream bench: {args.chunks}-event streams, upstream writes {args.chunk_ms} ms apart, "
        f"{args.rounds} rounds, mitmproxy {mitmproxy_version()}"
    )
    for mode in MODES:
        medians = {}
        for t in TARGETS:
            values, forward = added_ms(streams.sent.get((mode, t), []), upstream)
            medians[t] = median(values) if values else float("nan")
            # The mean: one block's CPU is counted in clock ticks (10 ms), too coarse for a median.
            extra = f", CPU {mean(cpus[(mode, t)]) * 1000:.2f} ms/stream"
            if mode == "32 clients":
                extra += f", {median(rates[t]):.0f} streams/s"
            print(
                f"  {mode:<13} {t:<15} added {medians[t]:.2f} ms "
                f"(request {median(forward) if forward else 0:.2f}, n={len(values)}){extra}"
            )
        print(
            f"  {mode:<13} metered/bare {medians['metered'] / medians['bare']:.2f}x, "
            f"metered/bare_streaming {medians['metered'] / medians['bare_streaming']:.2f}x"
            + (
                f", streams/s metered/bare {median(rates['metered']) / median(rates['bare']):.2f}x"
                if mode == "32 clients"
                else ""
            ),
            flush=True,
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--streams", type=int, default=40, help="streams per target, mode, round")
    parser.add_argument(
        "--blocks", type=int, default=4, help="turns the targets take within a round's streams"
    )
    parser.add_argument("--chunks", type=int, default=50, help="SSE writes per stream")
    parser.add_argument("--chunk-ms", type=float, default=0.0, help="pause between SSE writes")
    parser.add_argument("--gap-ms", type=float, default=20.0, help="pause between paced streams")
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--duration", type=float, default=3.0, help="seconds per 32-client round")
    parser.add_argument("--proxy-src", type=Path, help="run another checkout's proxy (before)")
    args = parser.parse_args(argv)
    RESULTS.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=RESULTS) as tmp:
        workdir = Path(tmp)
        with launched(workdir) as launch:
            running = start(workdir, args, launch)
            asyncio.run(measure(running, args, workdir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
