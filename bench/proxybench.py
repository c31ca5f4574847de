"""What the two proxy benches (`bench.stub_bench`, `bench.live_bench`) share: starting and stopping
their servers, the rounds of sequential and concurrent load, the command-line options of that
load, and the machine and run facts their BENCHMARKS.md sections open with.

Each bench keeps only what differs: its upstream and proxy, its requests, its streams and its
report.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import platform
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from statistics import median
from typing import TypedDict

from bench.httpclient import RequestFactory, concurrent, percentile, sequential

HOST = "127.0.0.1"
BIN = Path(sys.executable).parent
RESULTS = Path(__file__).resolve().parent / "results"  # git-ignored
STARTUP_TIMEOUT = 60.0


# --- processes -------------------------------------------------------------------------------


@dataclass
class Server:
    name: str
    port: int
    proc: subprocess.Popen[bytes]


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def read_line(proc: subprocess.Popen[bytes], prefix: str, deadline: float) -> str:
    """The rest of the first line of the child's stdout that starts with `prefix`."""
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline().decode()
        if not line:
            raise RuntimeError(f"{proc.args!r} exited before it was ready")
        if line.startswith(prefix):
            return line.removeprefix(prefix).strip()
    raise TimeoutError(f"{proc.args!r} did not print {prefix!r} in time")


def drain(proc: subprocess.Popen[bytes], log: Path) -> None:
    """Copy the rest of the child's stdout to `log`, in a thread, until the child closes it.

    A child's stdout is a pipe only so its ready line can be read; left unread, the pipe fills
    (64 KiB) and a child that logs each call there blocks in its next write, mid-request:
    LiteLLM's uvicorn access log stalled a whole bench run that way."""
    out = proc.stdout
    assert out is not None

    def copy() -> None:
        with out, open(log, "ab") as sink:
            for line in iter(out.readline, b""):
                sink.write(line)

    threading.Thread(target=copy, name=f"drain {log.name}", daemon=True).start()


def wait_listening(port: int, proc: subprocess.Popen[bytes], deadline: float) -> None:
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args!r} exited with {proc.returncode}")
        with contextlib.suppress(OSError), socket.create_connection((HOST, port), timeout=1):
            return
        time.sleep(0.05)
    raise TimeoutError(f"{proc.args!r} did not listen on {port} in time")


def stop(proc: subprocess.Popen[bytes]) -> None:
    # SIGINT, as Ctrl-C would: the proxies then shut down cleanly, and the live bench reads the
    # call log and the ledger they leave.
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Launcher:
    """Starts a bench's servers, each with its stderr in `workdir/logs/<name>.stderr`, within one
    start-up deadline; `launched` stops them all, whatever happened."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.started: dict[str, Server] = {}
        self.deadline = time.monotonic() + STARTUP_TIMEOUT
        self.logs = workdir / "logs"
        self.logs.mkdir()

    def start(
        self, name: str, cmd: list[str], env: dict[str, str] | None = None, ready: bool = False
    ) -> Server:
        """Start `cmd`; with `ready`, its stdout waits for `ready_line`, else goes to its log."""
        stderr = open(self.logs / f"{name}.stderr", "wb")  # noqa: SIM115 - the child owns it
        try:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=stderr, env=env)
        finally:
            stderr.close()
        self.started[name] = Server(name, 0, proc)
        if not ready:
            drain(proc, self.logs / f"{name}.stdout")
        return self.started[name]

    def ready_line(self, server: Server, prefix: str) -> str:
        """The rest of the child's first stdout line starting with `prefix`; the lines after it
        go on to `workdir/logs/<name>.stdout`."""
        line = read_line(server.proc, prefix, self.deadline)
        drain(server.proc, self.logs / f"{server.name}.stdout")
        return line

    def upstream(self, name: str, cmd: list[str]) -> Server:
        """A `bench.miniserver` upstream: it prints the port it chose."""
        server = self.start(name, cmd, ready=True)
        server.port = int(self.ready_line(server, "PORT "))
        return server

    def bare_mitmdumps(self, upstream: Server) -> None:
        """`bare`, a plain `mitmdump --mode reverse` in front of `upstream`, and `bare_streaming`,
        the same with `stream_large_bodies=1` so that it streams rather than buffers."""
        for name, extra in (("bare", []), ("bare_streaming", ["--set", "stream_large_bodies=1"])):
            port = free_port()
            cmd = [
                str(BIN / "mitmdump"),
                "-q",
                "--mode",
                f"reverse:http://{HOST}:{upstream.port}@{port}",
                "--listen-host",
                HOST,
                "--set",
                f"confdir={self.workdir / 'mitmproxy'}",
                *extra,
            ]
            self.start(name, cmd).port = port

    def harness_proxy(
        self, name: str, options: list[str], env: dict[str, str] | None = None
    ) -> Server:
        """`harness proxy serve OPTIONS`; its port is read from the exports it prints."""
        server = self.start(
            name, [str(BIN / "harness"), "proxy", "serve", *options], env, ready=True
        )
        base = self.ready_line(server, "export OPENAI_BASE_URL=")
        server.port = int(base.split(":")[2].split("/")[0])
        return server

    def wait_listening(self) -> dict[str, Server]:
        for server in self.started.values():
            wait_listening(server.port, server.proc, self.deadline)
        return self.started

    def stop_all(self) -> None:
        for server in self.started.values():
            stop(server.proc)


@contextlib.contextmanager
def launched(workdir: Path) -> Iterator[Launcher]:
    launcher = Launcher(workdir)
    try:
        yield launcher
    finally:
        launcher.stop_all()


# --- load ------------------------------------------------------------------------------------

# One busy process: a loaded machine made on purpose (`--busy N`), so a figure "under load" can
# be repeated, rather than read off whatever else the machine happened to run.
BUSY_LOOP = "while True: pass"


@contextlib.contextmanager
def busy(n: int) -> Iterator[None]:
    """`n` processes spinning on the CPU at normal priority while the block runs."""
    procs = [
        subprocess.Popen([sys.executable, "-c", BUSY_LOOP], stdin=subprocess.DEVNULL)
        for _ in range(n)
    ]
    try:
        yield
    finally:
        for proc in procs:
            proc.kill()
        for proc in procs:
            proc.wait()


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process, all its threads included."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# A target counts as idle once its process has used no CPU for this long; waiting stops after
# SETTLE_LIMIT_S in any case (a process busy for good must not stall the bench).
SETTLE_WINDOW_S = 0.03
SETTLE_LIMIT_S = 5.0


async def settle(pid: int) -> None:
    """Wait until process `pid` has used no CPU for SETTLE_WINDOW_S (at most SETTLE_LIMIT_S).

    A gateway keeps working after its last reply (LiteLLM's logging and cost callbacks ran for
    seconds after a 32-client load): measured next, another target shares the cores with that
    backlog. The targets run in a fixed cycle, so the same one always came after LiteLLM (the
    metered proxy: its sequential p50 doubled). Waiting for quiet between targets makes each
    measure only itself."""
    start = time.monotonic()
    before = cpu_seconds(pid)
    while time.monotonic() - start < SETTLE_LIMIT_S:
        await asyncio.sleep(SETTLE_WINDOW_S)
        now = cpu_seconds(pid)
        if now == before:
            break
        before = now


class LoadSummary(TypedDict):
    p50_ms: float
    p99_ms: float
    samples: int  # sequential requests measured
    calls_per_s: float  # median over the rounds
    rate_range: tuple[float, float]  # lowest and highest round
    cpu_ms_per_call: float  # the serving process's CPU per call, median of rounds
    errors: int
    conc_p99_ms: float  # latency p99 under the concurrent clients, median of rounds


@dataclass
class Load:
    """One target's samples over the rounds."""

    latencies: list[float] = field(default_factory=list)  # seconds, sequential
    rates: list[float] = field(default_factory=list)  # calls/s, one per round
    cpu: list[float] = field(default_factory=list)  # CPU seconds per call, one per round
    conc_p99: list[float] = field(default_factory=list)  # seconds, concurrent p99 per round
    errors: int = 0

    def summary(self) -> LoadSummary:
        return LoadSummary(
            p50_ms=percentile(self.latencies, 50) * 1000,
            p99_ms=percentile(self.latencies, 99) * 1000,
            samples=len(self.latencies),
            calls_per_s=median(self.rates),
            rate_range=(min(self.rates), max(self.rates)),
            cpu_ms_per_call=median(self.cpu) * 1000,
            errors=self.errors,
            conc_p99_ms=median(self.conc_p99) * 1000 if self.conc_p99 else 0.0,
        )


async def measure_load(
    running: dict[str, Server],
    makes: dict[str, RequestFactory],
    args: argparse.Namespace,
    label: str,
    show: Callable[[str, Load], str],
) -> dict[str, Load]:
    """Sequential latencies, then calls/s and CPU per call under `args.clients` concurrent
    clients, for each target of `makes` (in that order), in rounds that rotate the targets, so a
    burst of load from elsewhere on the machine falls on all of them rather than on one. After
    each round prints `label round i/n: ` and `show(target, load)` for every target."""
    targets = list(makes)
    loads = {t: Load() for t in targets}
    per_round = max(1, args.requests // args.rounds)
    for round_ in range(args.rounds):
        shift = round_ % len(targets)
        for target in targets[shift:] + targets[:shift]:
            server, load = running[target], loads[target]
            warmup = args.warmup if round_ == 0 else args.warmup // 10
            load.latencies += await sequential(
                HOST, server.port, makes[target], per_round, warmup, args.seq_seconds
            )
            before = cpu_seconds(server.proc.pid)
            tput = await concurrent(
                HOST, server.port, makes[target], args.clients, args.conc_warmup, args.duration
            )
            load.cpu.append((cpu_seconds(server.proc.pid) - before) / max(1, tput.total_calls))
            load.rates.append(tput.per_second)
            if tput.latencies:
                load.conc_p99.append(percentile(tput.latencies, 99))
            load.errors += tput.errors
            await settle(server.proc.pid)
        print(
            f"  {label} round {round_ + 1}/{args.rounds}: "
            + ", ".join(show(t, loads[t]) for t in targets),
            flush=True,
        )
    return loads


def add_load_options(parser: argparse.ArgumentParser, requests: int) -> None:
    """The options `measure_load` reads."""
    parser.add_argument(
        "--requests", type=int, default=requests, help="sequential requests measured"
    )
    parser.add_argument("--warmup", type=int, default=100, help="sequential warm-up requests")
    parser.add_argument(
        "--seq-seconds", type=float, default=4.0, help="cap on one round's sequential requests"
    )
    parser.add_argument("--rounds", type=int, default=3, help="rounds alternating the targets")
    parser.add_argument("--clients", type=int, default=32, help="concurrent keep-alive clients")
    parser.add_argument("--duration", type=float, default=3.0, help="seconds counted per round")
    parser.add_argument("--conc-warmup", type=float, default=0.5, help="seconds before counting")


def alternate(
    rounds: int,
    before: Path | None,
    script: str,
    child_args: list[str],
    after: Path,
    env: dict[str, str] | None = None,
) -> dict[str, list[float]]:
    """Run `script --child CHILD_ARGS` for this checkout ("after") and, with `before`, that one
    too, in alternating rounds, so both share the machine's load; each child's figure is the
    last line it prints."""
    runs: dict[str, list[float]] = {"after": []}
    if before is not None:
        runs["before"] = []
    for _ in range(rounds):
        for name in runs:
            src = before.resolve() if name == "before" and before else after
            runs[name].append(_child_figure(script, child_args, src, env or {}))
    return runs


def _child_figure(script: str, child_args: list[str], src: Path, env: dict[str, str]) -> float:
    # Run from `/`, so the checkout's own packages (proxy, bench, tests) are `src`'s, not those
    # of the script's directory.
    environ = {**os.environ, **env, "PYTHONPATH": str(src)}
    cmd = [sys.executable, script, "--child", *child_args]
    out = subprocess.run(cmd, env=environ, cwd="/", capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def print_rounds(runs: dict[str, list[float]], describe: Callable[[list[float]], str]) -> None:
    """One line per checkout: `describe(its rounds' figures)`, then the load average."""
    load = os.getloadavg()[0]
    for name, values in runs.items():
        print(f"{name:<6} {describe(values)}; load average {load:.1f}")


# --- the run's facts -------------------------------------------------------------------------


def cpu_model() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    return platform.processor() or "unknown"


def mitmproxy_version() -> str:
    from mitmproxy.version import VERSION

    return VERSION


class RunFacts(TypedDict):
    machine: dict[str, str]
    date: str
    command: str
    elapsed: float


class BenchRun:
    """Notes the machine, the start time and the load average when a bench starts; `facts` gives
    what its report states about the run once the measuring is done."""

    def __init__(self, module: str, argv: list[str] | None, busy: int = 0) -> None:
        self.module, self.argv = module, argv
        self.machine = {
            "nproc": str(len(os.sched_getaffinity(0))),
            "cpu": cpu_model(),
            "python": platform.python_version(),
            "mitmproxy": mitmproxy_version(),
        }
        if busy:
            self.machine["busy"] = f"{busy} busy-loop processes alongside (--busy {busy})"
        self.started = time.monotonic()
        self.load_before = os.getloadavg()[0]

    def facts(self) -> RunFacts:
        elapsed = time.monotonic() - self.started
        machine = {
            **self.machine,
            "load": f"{self.load_before:.2f} before, {os.getloadavg()[0]:.2f} after",
        }
        return RunFacts(
            machine=machine,
            date=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            command=self.command(),
            elapsed=elapsed,
        )

    def command(self) -> str:
        """How to repeat this run: `bench/run` when it ran this bench, else this command."""
        if os.environ.get("BENCH_VIA_RUN"):
            return "bench/run"
        args = sys.argv[1:] if self.argv is None else self.argv
        return " ".join([f".venv/bin/python -m {self.module}", *args])
