"""The figures of `bench.stub_bench` and their section in BENCHMARKS.md."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from bench.markdown import replace_section

SECTION = "Record-mode proxy"
TARGET_NAMES = {
    "direct": "direct (no proxy)",
    "bare": "bare `mitmdump --mode reverse`",
    "bare_streaming": "bare `mitmdump --mode reverse`, `stream_large_bodies=1`",
    "stub": "harness stub proxy (record)",
}


@dataclass
class Figures:
    target: str
    route: str
    p50_ms: float
    p99_ms: float
    samples: int  # sequential requests measured
    calls_per_s: float  # median over the rounds
    rate_range: tuple[float, float]  # lowest and highest round
    cpu_ms_per_call: float  # the serving process's CPU per call, 32 clients, median of rounds
    errors: int
    conc_p99_ms: float = 0.0  # latency p99 under the concurrent clients, median of rounds


@dataclass
class StreamFigures:
    target: str
    events: int
    head_ms: float
    first_data_ms: float
    last_byte_ms: float


def _verdict(ok: bool) -> str:
    return "met" if ok else "**missed**"


def render(
    figures: list[Figures],
    streams: list[StreamFigures],
    *,
    machine: dict[str, str],
    date: str,
    command: str,
    settings: argparse.Namespace,
    elapsed: float,
) -> str:
    by = {(f.route, f.target): f for f in figures}
    routes = sorted({f.route for f in figures}, key=["chat", "embeddings"].index)
    lines = [
        f"## {SECTION}",
        "",
        f"Measured {date} on {machine['nproc']} cores ({machine['cpu']}), Python "
        f"{machine['python']}, mitmproxy {machine['mitmproxy']}; load average "
        f"{machine['load']} (other work shares this machine); the whole bench took "
        f"{elapsed:.0f} s. Repeat from the repository root with:",
        "",
        "```sh",
        command,
        "```",
        "",
        "One raw HTTP/1.1 keep-alive client (`bench/httpclient.py`) drives every target: the "
        "minimal local upstream (`bench/upstream.py`) directly, a bare `mitmdump -q --mode "
        "reverse:http://127.0.0.1:UPSTREAM@PORT` in front of it, and `harness proxy serve` (record "
        "mode, writing calls.jsonl and bodies/). Chat: `POST /openai/v1/chat/completions` with a "
        "small body (~640-byte reply); embeddings: `POST /openai/v1/embeddings`, base64, 1,536 "
        "dimensions (~8.3 KB reply). The upstream's fixed replies are the same sizes. Every stub "
        "request differs, so each call hashes, stores and logs new bodies. "
        f"Each route runs {settings.rounds} rounds that alternate the targets. Sequential: "
        f"up to {settings.requests} requests in all (after {settings.warmup} warm-up; a round "
        f"stops after {settings.seq_seconds:g} s, n says how many ran) on one connection; "
        "p50/p99 over all of them. Concurrent: "
        f"{settings.clients} closed-loop clients, each on its own connection, counted for "
        f"{settings.duration:g} s after {settings.conc_warmup:g} s per round; the median round, "
        "with the lowest and highest in brackets. CPU/call is the serving process's CPU time "
        "(all threads) per call under that load: mitmdump for bare, the upstream for direct. "
        "The client, the proxy and the upstream share the machine's cores.",
        "",
        f"| route | target | p50 ms | p99 ms | n | calls/s, {settings.clients} clients "
        "| CPU ms/call | errors |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for route in routes:
        for target in ("direct", "bare", "stub"):
            f = by[(route, target)]
            lines.append(
                f"| {route} | {TARGET_NAMES[target]} | {f.p50_ms:.2f} | {f.p99_ms:.2f} "
                f"| {f.samples} | {f.calls_per_s:.0f} "
                f"({f.rate_range[0]:.0f}–{f.rate_range[1]:.0f}) "
                f"| {f.cpu_ms_per_call:.2f} | {f.errors} |"
            )
    lines += [
        "",
        "| figure (same run) | " + " | ".join(routes) + " | target |",
        "|---|" + "---:|" * len(routes) + "---|",
    ]
    rows: list[tuple[str, list[str], str]] = [
        (
            "bare p50 − direct p50 (added by mitmdump)",
            [f"{by[(r, 'bare')].p50_ms - by[(r, 'direct')].p50_ms:+.2f} ms" for r in routes],
            "",
        ),
        (
            "stub p50 − direct p50",
            [f"{by[(r, 'stub')].p50_ms - by[(r, 'direct')].p50_ms:+.2f} ms" for r in routes],
            "",
        ),
    ]
    latency = [by[(r, "stub")].p50_ms / by[(r, "bare")].p50_ms for r in routes]
    rate = [by[(r, "stub")].calls_per_s / by[(r, "bare")].calls_per_s for r in routes]
    rows.append(
        (
            "stub p50 / bare p50",
            [f"{x:.2f} ({_verdict(x <= 1.0)})" for x in latency],
            "<= 1.0",
        )
    )
    rows.append(
        (
            "stub calls/s / bare calls/s",
            [f"{x:.2f} ({_verdict(x >= 1.0)})" for x in rate],
            ">= 1.0",
        )
    )
    for name, cells, target in rows:
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {target} |")
    if streams:
        events = streams[0].events
        lines += [
            "",
            f"Streamed chat reply, {events} SSE events 20 ms apart (the stub via a `[[delays]]` "
            "`chunk_ms = 20` rule; the upstream paced the same), median of "
            f"{settings.stream_repeats}; times from sending the request:",
            "",
            "| target | response head (TTFB) ms | first body bytes ms | last byte ms "
            "| streams (first bytes before half the last) |",
            "|---|---:|---:|---:|---|",
        ]
        for s in streams:
            streamed = "yes" if s.first_data_ms < s.last_byte_ms / 2 else "**no** (buffered)"
            lines.append(
                f"| {TARGET_NAMES[s.target]} | {s.head_ms:.1f} | {s.first_data_ms:.1f} "
                f"| {s.last_byte_ms:.1f} | {streamed} |"
            )
    return "\n".join(lines) + "\n"


def write_section(path: Path, section: str) -> None:
    """Replace this bench's section of `path`, or append it; other sections stay."""
    replace_section(path, SECTION, section)
