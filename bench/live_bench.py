"""Live-mode proxy benchmark (issue 3): the metering proxy against a bare mitmdump reverse proxy
and a direct call to a fast fake vendor, all in the same run with the same client; then the
durable ledger's settlements per second.

Targets, each reached by `bench.httpclient` (raw HTTP/1.1, keep-alive):
  direct    `bench.vendor_upstream`, an OpenAI-format upstream that reports usage
  bare      `mitmdump -q --mode reverse:http://127.0.0.1:UP@PORT` in front of it (and, for
            streams, a second one with `--set stream_large_bodies=1`, so that it streams)
  metered   `harness proxy serve --mode live` forwarding to it: reserve, journal, key swap,
            usage, settlement, call log
Figures: sequential p50/p99 of a chat completion and the latency each proxy adds over direct;
calls/s with 32 concurrent keep-alive clients and CPU per call; a paced SSE stream's time to first
byte and to end; ledger settlements/s with fsync (the measurements of `bench/ledger_bench.py`).

Run: `bench/run` (all benches), or `.venv/bin/python -m bench.live_bench --write BENCHMARKS.md`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Coroutine, Iterator
from pathlib import Path
from statistics import median
from typing import Any

from bench import ledger_bench, litellm_target
from bench.httpclient import Connection, Reply, RequestFactory, percentile
from bench.live_report import (
    LedgerFigures,
    MeteredCheck,
    PlainFigures,
    StreamFigures,
    render,
    save_figures,
    write_section,
)
from bench.proxybench import (
    BIN,
    HOST,
    RESULTS,
    BenchRun,
    Launcher,
    Server,
    add_load_options,
    busy,
    launched,
    measure_load,
    settle,
)

MODEL = "gpt-4.1-mini"  # in the packaged price table
PLAIN_TARGETS = ["direct", "bare", "litellm", "metered"]
STREAM_TARGETS = ["direct", "bare", "bare_streaming", "litellm", "metered", "metered_hidden"]
DUMMY_KEY = "sk-bench-dummy-study-key"
STREAM_TIMEOUT_S = 30.0  # one streamed call (about 0.5 s when nothing stalls)
# The arm's placeholder, as an SDK sends it; the metered proxy swaps in the study key.
ARM_HEADERS = {"authorization": "Bearer harness-placeholder-key"}


def chat_request(
    path: str,
    stream: bool = False,
    ask_usage: bool = True,
    headers: dict[str, str] = ARM_HEADERS,
    tag: str = "",
) -> RequestFactory:
    """Requests that differ by a counter; with `tag`, the text says `bench stream TAG-N`, which
    the upstream's `--timing-log` names the stream by."""
    n = itertools.count()  # every body differs, so each call stores and logs new bodies

    def make(_: int) -> tuple[str, str, bytes, dict[str, str]]:
        text = f"bench stream {tag}-{next(n)}" if tag else f"Hello, this is bench request {next(n)}"
        body: dict[str, object] = {
            "model": MODEL,
            "messages": [{"role": "user", "content": text}],
            "max_tokens": 64,
        }
        if stream:
            body["stream"] = True
            if ask_usage:
                body["stream_options"] = {"include_usage": True}
        return "POST", path, json.dumps(body, separators=(",", ":")).encode(), headers

    return make


def _path(target: str) -> str:
    return "/openai/v1/chat/completions" if target.startswith("metered") else "/v1/chat/completions"


def _headers(target: str) -> dict[str, str]:
    return litellm_target.HEADERS if target == "litellm" else ARM_HEADERS


def _port(target: str) -> str:
    return "metered" if target.startswith("metered") else target


# --- processes -------------------------------------------------------------------------------


def timing_log(workdir: Path) -> Path:
    """Where the upstream writes each tagged stream's timing (bench.vendor_upstream)."""
    return workdir / "stream-timing.log"


def upstream_times(workdir: Path) -> dict[str, tuple[float, float]]:
    """Tag -> (the upstream had read the request, had written the reply's last byte), both
    `time.perf_counter()` of the upstream process: the same clock as this process's."""
    path = timing_log(workdir)
    times: dict[str, tuple[float, float]] = {}
    for line in path.read_text().splitlines() if path.exists() else []:
        tag, received, last_write = line.split()
        times[tag] = (float(received), float(last_write))
    return times


@contextlib.contextmanager
def servers(workdir: Path, args: argparse.Namespace) -> Iterator[dict[str, Server]]:
    """Start the fake vendor, two bare mitmdumps and the live proxy; stop them all on exit."""
    with launched(workdir) as launch:
        pace = ["--chunks", str(args.chunks), "--chunk-ms", str(args.chunk_ms)]
        pace += ["--timing-log", str(timing_log(workdir))]
        upstream = launch.upstream("direct", [sys.executable, "-m", "bench.vendor_upstream", *pace])
        if "litellm" in args.targets:
            # First: its start-up is by far the longest, and it overlaps the others'.
            launch.deadline += litellm_target.STARTUP_TIMEOUT
            litellm_target.start(launch, upstream, MODEL)
        launch.bare_mitmdumps(upstream)
        start_metered(launch, workdir, upstream, args.proxy_src)
        yield launch.wait_listening()


def start_metered(
    launch: Launcher, workdir: Path, upstream: Server, proxy_src: Path | None
) -> None:
    """The live metering proxy ("metered") in front of `upstream`, with a bench ledger and cap."""
    up_url = f"http://{HOST}:{upstream.port}"
    options = ["--mode", "live", "--port", "0", "--run-dir", str(workdir / "run")]
    options += ["--cap", "1000", "--ledger", str(workdir / "ledger.jsonl"), "--deadline", "600"]
    options += ["--upstream", f"openai={up_url}", "--upstream", f"anthropic={up_url}"]
    env = {**os.environ, "OPENAI_API_KEY": DUMMY_KEY, "ANTHROPIC_API_KEY": DUMMY_KEY}
    if proxy_src:
        # Another checkout's proxy code (a `git worktree` of an older commit: "before"),
        # ahead of this venv's editable install of the repository's.
        env["PYTHONPATH"] = str(proxy_src.resolve())
    launch.harness_proxy("metered", options, env)


# --- measurements ----------------------------------------------------------------------------


async def measure_plain(running: dict[str, Server], args: argparse.Namespace) -> list[PlainFigures]:
    targets = [t for t in PLAIN_TARGETS if t in args.targets]
    loads = await measure_load(
        running,
        {t: chat_request(_path(t), headers=_headers(t)) for t in targets},
        args,
        label="plain  ",
        show=lambda t, load: (
            f"{t} p50 {percentile(load.latencies, 50) * 1000:.2f} ms {load.rates[-1]:.0f}/s"
        ),
    )
    return [PlainFigures(target=t, **loads[t].summary()) for t in targets]


async def _streamed(target: str, call: Coroutine[Any, Any, Reply]) -> Reply:
    """One streamed call, warm-up ones included. A target that stalls a stream (LiteLLM has,
    twice) fails the bench with its name, rather than hanging it."""
    try:
        return await asyncio.wait_for(call, STREAM_TIMEOUT_S)
    except TimeoutError as e:
        raise RuntimeError(f"{target}: a streamed call took over {STREAM_TIMEOUT_S} s") from e


async def measure_streams(
    running: dict[str, Server], args: argparse.Namespace, workdir: Path
) -> list[StreamFigures]:
    """Each target's streams; `overhead_ms` is the end-to-end time minus the upstream's own span
    for that very stream (its pacing sleeps' jitter cancels), so the proxies compare by what
    they add: request forwarding, per-chunk relay and the tail after the upstream's last byte."""
    targets = [t for t in STREAM_TARGETS if t in args.targets]
    makes = {
        t: chat_request(
            _path(t),
            stream=True,
            ask_usage=t != "metered_hidden",
            headers=_headers(t),
            tag=t,
        )
        for t in targets
    }
    replies: dict[str, list[tuple[int, Reply]]] = {t: [] for t in targets}
    heads: dict[str, list[float]] = {t: [] for t in targets}
    firsts: dict[str, list[float]] = {t: [] for t in targets}
    lasts: dict[str, list[float]] = {t: [] for t in targets}
    chunks: dict[str, list[int]] = {t: [] for t in targets}
    conns = {t: Connection(HOST, running[_port(t)].port) for t in targets}
    try:
        for t in targets:  # one warm-up stream each: connections open, code paths hot
            await _streamed(t, conns[t].request(*makes[t](0)))
        sequence = {t: 1 for t in targets}  # the factory's counter: the tag's N
        # Target by target, one stream each, the order turning every time: the machine's state
        # drifts over a run (bare's figure moved 3.7-5.0 ms between runs) and a target's
        # streams taken in a block each saw a different moment of it. Interleaved, every target
        # samples the same moments, so their ratio is steadier than their absolute figures.
        for i in range(args.rounds * args.stream_repeats):
            shift = i % len(targets)
            for t in targets[shift:] + targets[:shift]:
                reply = await _streamed(t, conns[t].request(*makes[t](i)))
                if reply.status != 200 or reply.first_data is None:
                    raise RuntimeError(f"{t}: streamed call answered {reply.status}")
                if b"[DONE]" not in reply.body:
                    raise RuntimeError(f"{t}: the stream lacks its [DONE]")
                heads[t].append(reply.head - reply.sent)
                firsts[t].append(reply.first_data - reply.sent)
                lasts[t].append(reply.end - reply.sent)
                chunks[t].append(len(reply.chunk_times))
                replies[t].append((sequence[t], reply))
                sequence[t] += 1
                # A pause before the next stream, as an arm reading a reply would leave: a
                # stream's time is then its own, not partly the proxy finishing the one
                # before (the metered proxy books a stream just after its end goes out,
                # proxy.flow.after_reply; bare mitmdump's addons also run after a reply).
                await asyncio.sleep(args.stream_gap_ms / 1000)
                await settle(running[_port(t)].proc.pid)  # its after-work, not the next's
    finally:
        for conn in conns.values():
            await conn.close()
    upstream = upstream_times(workdir)
    results = []
    for t in targets:
        timed = [(reply, upstream[f"{t}-{n}"]) for n, reply in replies[t] if f"{t}-{n}" in upstream]
        forward = [received - reply.sent for reply, (received, _) in timed]
        tail = [reply.end - last for reply, (_, last) in timed]
        overhead = [ahead + behind for ahead, behind in zip(forward, tail, strict=True)]
        results.append(
            StreamFigures(
                target=t,
                head_ms=median(heads[t]) * 1000,
                first_data_ms=median(firsts[t]) * 1000,
                last_byte_ms=median(lasts[t]) * 1000,
                chunks=median(chunks[t]),
                samples=len(heads[t]),
                overhead_ms=median(overhead) * 1000 if timed else None,
                forward_ms=median(forward) * 1000 if timed else None,
                tail_ms=median(tail) * 1000 if timed else None,
            )
        )
        s = results[-1]
        over = (
            f", over upstream {s.overhead_ms:.2f} ms (request {s.forward_ms:.2f}, "
            f"tail {s.tail_ms:.2f})"
            if s.overhead_ms is not None and s.forward_ms is not None and s.tail_ms is not None
            else ""
        )
        print(
            f"  stream  {t:<15} head {s.head_ms:.1f} ms, first data {s.first_data_ms:.1f} ms, "
            f"last byte {s.last_byte_ms:.1f} ms{over}, {s.chunks:.0f} chunks",
            flush=True,
        )
    return results


def measure_ledger(workdir: Path, args: argparse.Namespace) -> LedgerFigures:
    """`bench/ledger_bench.py`'s three measurements, in a directory on the repository's disk."""
    tmp = workdir / "ledger-bench"
    tmp.mkdir()
    single = ledger_bench.one_per_entry(tmp, args.ledger_single)
    batched, entries = ledger_bench.batched(tmp, args.ledger_calls, 8)
    calls = args.ledger_calls // 8 * 8
    processes = ledger_bench.processes(tmp, args.ledger_per_process)
    figures = LedgerFigures(single, batched, entries, calls, processes, args.ledger_per_process)
    print(
        f"  ledger  one per entry {single:.0f}/s, SettlementWriter {batched:.0f}/s "
        f"({calls} calls in {entries} entries), 4 processes {processes:.0f}/s",
        flush=True,
    )
    return figures


def check_metered(workdir: Path) -> MeteredCheck:
    """After the proxy stopped: every metered call logged, priced, and the ledger intact."""
    records = [
        json.loads(line)
        for line in (workdir / "run" / "calls.jsonl").read_text().splitlines()
        if line.strip()
    ]
    ok = [r for r in records if r["outcome"] == "ok" and r["tokens"]["source"] == "vendor"]
    cost = sum((float(r.get("cost_usd") or 0) for r in records), 0.0)
    verify = subprocess.run(
        [str(BIN / "harness"), "ledger", "verify", "--ledger", str(workdir / "ledger.jsonl")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    verdict = "passed" if verify.returncode == 0 else f"**failed** ({verify.stdout.strip()})"
    return MeteredCheck(len(records), len(ok), f"{cost:.6f}", verdict)


async def measure(
    running: dict[str, Server], args: argparse.Namespace, workdir: Path
) -> tuple[list[PlainFigures], list[StreamFigures]]:
    plain = await measure_plain(running, args)
    return plain, await measure_streams(running, args, workdir)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    add_load_options(parser, requests=1500)
    parser.add_argument("--chunks", type=int, default=50, help="SSE writes per streamed reply")
    parser.add_argument("--chunk-ms", type=float, default=10.0, help="pause between SSE writes")
    parser.add_argument(
        "--stream-repeats",
        type=int,
        default=8,
        help="streams per target and round (the targets take turns, one stream each)",
    )
    parser.add_argument(
        "--stream-gap-ms", type=float, default=20.0, help="pause after each streamed call"
    )
    parser.add_argument("--ledger-single", type=int, default=1000)
    parser.add_argument("--ledger-calls", type=int, default=20000)
    parser.add_argument("--ledger-per-process", type=int, default=100)
    parser.add_argument("--write", type=Path, help="update this Markdown file's section")
    parser.add_argument(
        "--no-litellm", action="store_true", help="leave out LiteLLM's proxy (bench/litellm_target)"
    )
    parser.add_argument(
        "--proxy-src",
        type=Path,
        help="run the metered proxy from this checkout (e.g. a git worktree of an older commit)",
    )
    parser.add_argument(
        "--json", type=Path, help="also save the figures here (bench.live_compare reads them)"
    )
    parser.add_argument(
        "--busy",
        type=int,
        default=0,
        help="run N busy-loop processes alongside the whole bench: a loaded machine, on purpose",
    )
    args = parser.parse_args(argv)
    args.targets = set(PLAIN_TARGETS + STREAM_TARGETS) - ({"litellm"} if args.no_litellm else set())
    if min(args.requests, args.rounds, args.clients, args.stream_repeats) < 1:
        parser.error("--requests, --rounds, --clients and --stream-repeats must be positive")
    if args.duration <= 0 or args.chunks < 2 or args.busy < 0:
        parser.error("--duration must be positive, --chunks at least 2, --busy not negative")
    run = BenchRun("bench.live_bench", argv, busy=args.busy)
    print(f"live bench on {run.machine}", flush=True)
    # Run directory and ledgers on the repository's disk, where real runs keep them.
    RESULTS.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="live-bench-", dir=RESULTS) as tmp:
        workdir = Path(tmp)
        with servers(workdir, args) as running, busy(args.busy):
            plain, streams = asyncio.run(measure(running, args, workdir))
        check = check_metered(workdir)
        ledger = measure_ledger(workdir, args)
    section = render(plain, streams, ledger, check, settings=args, **run.facts())
    if args.json:
        save_figures(args.json, plain, streams, ledger, check, run.facts())
    if args.write:
        write_section(args.write, section)
    print(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
