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
import os
import platform
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from statistics import median

from bench.httpclient import Connection, RequestFactory, concurrent, percentile, sequential
from bench.report import Figures, StreamFigures, render, write_section

HOST = "127.0.0.1"
BIN = Path(sys.executable).parent
RESULTS = Path(__file__).resolve().parent / "results"  # git-ignored
STARTUP_TIMEOUT = 60.0
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


@dataclass
class Server:
    name: str
    port: int
    proc: subprocess.Popen[bytes]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def _read_line(proc: subprocess.Popen[bytes], prefix: str, deadline: float) -> str:
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline().decode()
        if not line:
            raise RuntimeError(f"{proc.args!r} exited before it was ready")
        if line.startswith(prefix):
            return line.removeprefix(prefix).strip()
    raise TimeoutError(f"{proc.args!r} did not print {prefix!r} in time")


def _wait_listening(port: int, proc: subprocess.Popen[bytes], deadline: float) -> None:
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args!r} exited with {proc.returncode}")
        with contextlib.suppress(OSError), socket.create_connection((HOST, port), timeout=1):
            return
        time.sleep(0.05)
    raise TimeoutError(f"{proc.args!r} did not listen on {port} in time")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    if proc.stdout:
        proc.stdout.close()


@contextlib.contextmanager
def servers(workdir: Path) -> Iterator[dict[str, Server]]:
    """Start the upstream, two bare mitmdumps and the harness proxy; stop them all on exit."""
    started: dict[str, Server] = {}
    deadline = time.monotonic() + STARTUP_TIMEOUT
    logs = workdir / "logs"
    logs.mkdir()

    def popen(name: str, cmd: list[str]) -> subprocess.Popen[bytes]:
        stderr = open(logs / f"{name}.stderr", "wb")  # noqa: SIM115 - the child owns it
        try:
            return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=stderr)
        finally:
            stderr.close()

    try:
        proc = popen("upstream", [sys.executable, "-m", "bench.upstream"])
        started["direct"] = Server("direct", int(_read_line(proc, "PORT ", deadline)), proc)
        upstream = started["direct"].port
        for name, extra in (("bare", []), ("bare_streaming", ["--set", "stream_large_bodies=1"])):
            port = _free_port()
            cmd = [
                str(BIN / "mitmdump"),
                "-q",
                "--mode",
                f"reverse:http://{HOST}:{upstream}@{port}",
                "--listen-host",
                HOST,
                "--set",
                f"confdir={workdir / 'mitmproxy'}",
                *extra,
            ]
            started[name] = Server(name, port, popen(name, cmd))
        stubs = workdir / "stubs.toml"
        stubs.write_text(f'schema = 1\n[[delays]]\npurpose = "{PACED_PURPOSE}"\nchunk_ms = 20\n')
        cmd = [str(BIN / "harness"), "proxy", "serve", "--port", "0"]
        cmd += ["--run-dir", str(workdir / "run"), "--stubs", str(stubs)]
        proc = popen("stub", cmd)
        base = _read_line(proc, "export OPENAI_BASE_URL=", deadline)
        started["stub"] = Server("stub", int(base.split(":")[2].split("/")[0]), proc)
        for server in started.values():
            _wait_listening(server.port, server.proc, deadline)
        yield started
    finally:
        for server in started.values():
            _stop(server.proc)


# --- measurements ----------------------------------------------------------------------------


def _prefix(target: str) -> str:
    # The upstream ignores the prefix; the stub proxy needs it to name the vendor.
    return "/openai/v1" if target == "stub" else "/v1"


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process, all its threads included."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def measure(
    servers: dict[str, Server], args: argparse.Namespace
) -> tuple[list[Figures], list[StreamFigures]]:
    """Each route is measured in rounds that alternate the targets, so a burst of load from
    elsewhere on the machine falls on all of them rather than on one."""
    figures = []
    targets = ["direct", "bare", "stub"]
    per_round = max(1, args.requests // args.rounds)
    for route, factory in (("chat", chat_request), ("embeddings", embedding_request)):
        makes = {t: factory(_prefix(t)) for t in targets}
        latencies: dict[str, list[float]] = {t: [] for t in targets}
        rates: dict[str, list[float]] = {t: [] for t in targets}
        cpu: dict[str, list[float]] = {t: [] for t in targets}
        errors = dict.fromkeys(targets, 0)
        for round_ in range(args.rounds):
            order = targets[round_ % 3 :] + targets[: round_ % 3]
            for target in order:
                server = servers[target]
                warmup = args.warmup if round_ == 0 else args.warmup // 10
                latencies[target] += await sequential(
                    HOST, server.port, makes[target], per_round, warmup, args.seq_seconds
                )
                before = _cpu_seconds(server.proc.pid)
                tput = await concurrent(
                    HOST, server.port, makes[target], args.clients, args.conc_warmup, args.duration
                )
                cpu[target].append((_cpu_seconds(server.proc.pid) - before) / tput.total_calls)
                rates[target].append(tput.per_second)
                errors[target] += tput.errors
            print(
                f"  {route:<10} round {round_ + 1}/{args.rounds}: "
                + ", ".join(f"{t} {rates[t][-1]:.0f}/s" for t in targets),
                flush=True,
            )
        for target in targets:
            figures.append(
                Figures(
                    target=target,
                    route=route,
                    p50_ms=percentile(latencies[target], 50) * 1000,
                    p99_ms=percentile(latencies[target], 99) * 1000,
                    samples=len(latencies[target]),
                    calls_per_s=median(rates[target]),
                    rate_range=(min(rates[target]), max(rates[target])),
                    cpu_ms_per_call=median(cpu[target]) * 1000,
                    errors=errors[target],
                )
            )
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


def _mitmproxy_version() -> str:
    from mitmproxy.version import VERSION

    return VERSION


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--requests", type=int, default=1200, help="sequential requests measured")
    parser.add_argument("--warmup", type=int, default=100, help="sequential warm-up requests")
    parser.add_argument(
        "--seq-seconds", type=float, default=4.0, help="cap on one round's sequential requests"
    )
    parser.add_argument("--rounds", type=int, default=3, help="rounds alternating the targets")
    parser.add_argument("--clients", type=int, default=32, help="concurrent keep-alive clients")
    parser.add_argument("--duration", type=float, default=3.0, help="seconds counted per round")
    parser.add_argument("--conc-warmup", type=float, default=0.5, help="seconds before counting")
    parser.add_argument("--stream-repeats", type=int, default=5)
    parser.add_argument("--write", type=Path, help="update this Markdown file's section")
    args = parser.parse_args(argv)
    if min(args.requests, args.rounds, args.clients) < 1 or args.duration <= 0:
        parser.error("--requests, --rounds, --clients and --duration must be positive")
    machine = {
        "nproc": str(len(os.sched_getaffinity(0))),
        "cpu": _cpu_model(),
        "python": platform.python_version(),
        "mitmproxy": _mitmproxy_version(),
    }
    print(f"stub bench on {machine}")
    started = time.monotonic()
    load_before = os.getloadavg()[0]
    # The run directory lives where real runs do (on the repository's disk): file creation, which
    # the stub proxy does for every body, costs several times more on some machines' /tmp.
    RESULTS.mkdir(parents=True, exist_ok=True)
    with (
        tempfile.TemporaryDirectory(prefix="stub-bench-", dir=RESULTS) as tmp,
        servers(Path(tmp)) as running,
    ):
        figures, streams = asyncio.run(measure(running, args))
    elapsed = time.monotonic() - started
    machine["load"] = f"{load_before:.2f} before, {os.getloadavg()[0]:.2f} after"
    command = "bench/run" if os.environ.get("BENCH_VIA_RUN") else _command(argv)
    section = render(
        figures,
        streams,
        machine=machine,
        date=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        command=command,
        settings=args,
        elapsed=elapsed,
    )
    if args.write:
        write_section(args.write, section)
    print(section)
    return 0


def _command(argv: list[str] | None) -> str:
    args = sys.argv[1:] if argv is None else argv
    return " ".join([".venv/bin/python -m bench.stub_bench", *args])


def _cpu_model() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    return platform.processor() or "unknown"


if __name__ == "__main__":
    sys.exit(main())
