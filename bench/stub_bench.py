"""Record-mode proxy benchmark (issue 2): the harness stub proxy against a bare mitmdump reverse
proxy and a direct call, all measured in the same run with the same client.

Targets, each reached by `bench.httpclient` (raw HTTP/1.1, keep-alive):
  direct  the minimal local upstream (`bench.upstream`), no proxy
  bare    `mitmdump -q --mode reverse:http://127.0.0.1:UPSTREAM@PORT` in front of that upstream
  stub    `harness proxy serve` (record mode: the addon answers; calls.jsonl and bodies/ written)
Figures: sequential latency p50/p99 over N requests on one connection after a warm-up, and calls/s
with 32 concurrent keep-alive clients, for a small chat completion and a base64 embedding. Each stub
request differs (a counter in the text), so every call hashes, stores and logs new bodies as a real
run does. Then a streamed chat reply with a per-chunk delay: time to the response head, to the first
body bytes and to the last byte, next to the bare mitmdump relaying an upstream SSE stream of the
same pace (buffered, as mitmdump does by default, and with `stream_large_bodies=1`).

Run: `bench/run` (all benches), or `.venv/bin/python -m bench.stub_bench --write BENCHMARKS.md`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from statistics import median

from bench.httpclient import Connection, RequestFactory
from bench.proxybench import (
    HOST,
    RESULTS,
    BenchRun,
    Server,
    add_load_options,
    launched,
    measure_load,
)
from bench.report import Figures, StreamFigures, render, write_section

PACED_PURPOSE = "bench-paced"
STREAM_PROMPT = "Tell me a long story about a lighthouse keeper and the sea"


def chat_request(prefix: str) -> RequestFactory:
    numbers = itertools.count()  # unique across rounds, so no stub body is ever stored twice

    def make(_: int) -> tuple[str, str, bytes, dict[str, str]]:
        text = f"Hello, this is bench request {next(numbers)}"
        body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": text}]}
        return "POST", f"{prefix}/chat/completions", json.dumps(body).encode(), {}

    return make


def embedding_request(prefix: str) -> RequestFactory:
    numbers = itertools.count()

    def make(_: int) -> tuple[str, str, bytes, dict[str, str]]:
        body = {
            "model": "text-embedding-3-small",
            "input": f"bench embedding text number {next(numbers)}",
            "encoding_format": "base64",
        }
        return "POST", f"{prefix}/embeddings", json.dumps(body).encode(), {}

    return make


# --- processes -------------------------------------------------------------------------------


@contextlib.contextmanager
def servers(workdir: Path) -> Iterator[dict[str, Server]]:
    """Start the upstream, two bare mitmdumps and the harness proxy; stop them all on exit."""
    with launched(workdir) as launch:
        upstream = launch.upstream("direct", [sys.executable, "-m", "bench.upstream"])
        launch.bare_mitmdumps(upstream)
        stubs = workdir / "stubs.toml"
        stubs.write_text(f'schema = 1\n[[delays]]\npurpose = "{PACED_PURPOSE}"\nchunk_ms = 20\n')
        launch.harness_proxy(
            "stub",
            ["--port", "0", "--run-dir", str(workdir / "run"), "--stubs", str(stubs)],
        )
        yield launch.wait_listening()


# --- measurements ----------------------------------------------------------------------------


def _prefix(target: str) -> str:
    # The upstream ignores the prefix; the stub proxy needs it to name the vendor.
    return "/openai/v1" if target == "stub" else "/v1"


async def measure(
    servers: dict[str, Server], args: argparse.Namespace
) -> tuple[list[Figures], list[StreamFigures]]:
    figures = []
    targets = ["direct", "bare", "stub"]
    for route, factory in (("chat", chat_request), ("embeddings", embedding_request)):
        loads = await measure_load(
            servers,
            {t: factory(_prefix(t)) for t in targets},
            args,
            label=f"{route:<10}",
            show=lambda t, load: f"{t} {load.rates[-1]:.0f}/s",
        )
        figures += [Figures(target=t, route=route, **loads[t].summary()) for t in targets]
    ports = {name: server.port for name, server in servers.items()}
    return figures, await measure_streams(ports, args)


async def measure_streams(ports: dict[str, int], args: argparse.Namespace) -> list[StreamFigures]:
    body = json.dumps(
        {
            "model": "gpt-4o-mini",
            "stream": True,
            "messages": [{"role": "user", "content": STREAM_PROMPT}],
        }
    ).encode()
    stub_path = "/openai/v1/chat/completions"
    headers = {"x-harness-purpose": PACED_PURPOSE}
    # Count the stub's SSE events once, so the upstream streams as many at the same pace.
    probe = Connection(HOST, ports["stub"])
    try:
        events = (await probe.request("POST", stub_path, body, headers)).body.count(b"data: ")
    finally:
        await probe.close()
    upstream_path = f"/stream?chunks={events}&chunk_ms=20"
    plans = [
        ("stub", "stub", "POST", stub_path, body, headers),
        ("direct", "direct", "GET", upstream_path, b"", {}),
        ("bare", "bare", "GET", upstream_path, b"", {}),
        ("bare_streaming", "bare_streaming", "GET", upstream_path, b"", {}),
    ]
    results = []
    for label, target, method, path, payload, extra in plans:
        conn = Connection(HOST, ports[target])
        heads, firsts, lasts = [], [], []
        try:
            for _ in range(args.stream_repeats):
                reply = await conn.request(method, path, payload, extra)
                assert reply.status == 200 and reply.first_data is not None, reply.status
                heads.append(reply.head - reply.sent)
                firsts.append(reply.first_data - reply.sent)
                lasts.append(reply.end - reply.sent)
        finally:
            await conn.close()
        results.append(
            StreamFigures(
                target=label,
                events=events,
                head_ms=median(heads) * 1000,
                first_data_ms=median(firsts) * 1000,
                last_byte_ms=median(lasts) * 1000,
            )
        )
        print(
            f"  stream     {label:<14} head {results[-1].head_ms:.1f} ms, first data "
            f"{results[-1].first_data_ms:.1f} ms, last byte {results[-1].last_byte_ms:.1f} ms"
        )
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    add_load_options(parser, requests=1200)
    parser.add_argument("--stream-repeats", type=int, default=5)
    parser.add_argument("--write", type=Path, help="update this Markdown file's section")
    args = parser.parse_args(argv)
    if min(args.requests, args.rounds, args.clients) < 1 or args.duration <= 0:
        parser.error("--requests, --rounds, --clients and --duration must be positive")
    run = BenchRun("bench.stub_bench", argv)
    print(f"stub bench on {run.machine}")
    # The run directory lives where real runs do (on the repository's disk): file creation, which
    # the stub proxy does for every body, costs several times more on some machines' /tmp.
    RESULTS.mkdir(parents=True, exist_ok=True)
    with (
        tempfile.TemporaryDirectory(prefix="stub-bench-", dir=RESULTS) as tmp,
        servers(Path(tmp)) as running,
    ):
        figures, streams = asyncio.run(measure(running, args))
    section = render(figures, streams, settings=args, **run.facts())
    if args.write:
        write_section(args.write, section)
    print(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
