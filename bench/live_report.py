"""The figures of `bench.live_bench` and their section in BENCHMARKS.md."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass
from pathlib import Path

from bench.markdown import replace_section
from bench.proxybench import SETTLE_WINDOW_S

SECTION = "Live-mode proxy"
TARGET_NAMES = {
    "direct": "direct (no proxy)",
    "bare": "bare `mitmdump --mode reverse`",
    "bare_streaming": "bare `mitmdump --mode reverse`, `stream_large_bodies=1`",
    "litellm": "LiteLLM proxy (`litellm --config`, no database)",
    "metered": "harness live proxy (metered)",
    "metered_hidden": "harness live proxy, arm did not ask for usage (chunk hidden)",
}
# Targets, as ratios in the same run (issue 3).
MAX_OVERHEAD_RATIO = 1.3
MIN_RATE_RATIO = 0.8
MIN_SETTLEMENTS = 500.0


@dataclass
class PlainFigures:
    target: str
    p50_ms: float
    p99_ms: float
    samples: int
    calls_per_s: float  # median round
    rate_range: tuple[float, float]
    cpu_ms_per_call: float  # the serving process's CPU per call under the concurrent load
    errors: int
    conc_p99_ms: float = 0.0  # latency p99 under the concurrent clients, median of rounds


@dataclass
class StreamFigures:
    target: str
    head_ms: float  # response head (TTFB)
    first_data_ms: float  # first body bytes
    last_byte_ms: float
    chunks: float  # median HTTP chunks the client received per reply (0: not chunked)
    samples: int
    # Median end-to-end time minus the upstream's own span for the same stream (request read to
    # last byte written): what the path in front of it adds. None: the upstream logged no timing.
    overhead_ms: float | None = None
    forward_ms: float | None = None  # request sent -> the upstream had read it
    tail_ms: float | None = None  # the upstream's last byte written -> the client's last byte


@dataclass
class LedgerFigures:
    single: float  # settlements/s, one call per fsynced entry
    batched: float  # SettlementWriter (what the proxy uses), 8 threads
    batched_entries: int
    batched_calls: int
    processes: float  # 4 processes, one call per entry
    per_process: int


@dataclass
class MeteredCheck:
    calls: int  # call-log lines of the metered proxy
    ok: int  # outcome ok, priced from the vendor's usage
    cost_usd: str
    ledger_verify: str  # `harness ledger verify`'s verdict


def _verdict(ok: bool) -> str:
    return "met" if ok else "**missed**"


def render(
    plain: list[PlainFigures],
    streams: list[StreamFigures],
    ledger: LedgerFigures,
    check: MeteredCheck,
    *,
    machine: dict[str, str],
    date: str,
    command: str,
    settings: argparse.Namespace,
    elapsed: float,
) -> str:
    by = {f.target: f for f in plain}
    st = {s.target: s for s in streams}
    direct = by["direct"]
    lines = [
        f"## {SECTION}",
        "",
        f"Measured {date} on {machine['nproc']} cores ({machine['cpu']}), Python "
        f"{machine['python']}, mitmproxy {machine['mitmproxy']}; load average "
        f"{machine['load']} (other work shares this machine"
        + (f"; {machine['busy']}" if machine.get("busy") else "")
        + "); the whole bench took "
        f"{elapsed:.0f} s. Repeat from the repository root with:",
        "",
        "```sh",
        command,
        "```",
        "",
        "One raw HTTP/1.1 keep-alive client (`bench/httpclient.py`) drives three targets in front "
        "of one fast OpenAI-format upstream (`bench/vendor_upstream.py`: a pre-built "
        "`chat.completion` for gpt-4.1-mini with `usage`, ~640 bytes, or a paced SSE stream "
        "ending with the usage chunk and `[DONE]`): the upstream directly; a bare `mitmdump -q "
        "--mode reverse:http://127.0.0.1:UP@PORT`; and `harness proxy serve --mode live --cap "
        "1000 --ledger FILE --upstream openai=http://127.0.0.1:UP --deadline 600` (dummy study "
        "key in its environment), which for every call prices the model, reserves the worst "
        "case, journals the reservation (durable blocks fsynced ahead of need), swaps the key, "
        "forwards, reads the usage, settles "
        "in the ledger (batched, fsynced) and logs the call and its bodies. Each request differs "
        "(a counter in the text) and asks for `max_tokens: 64`. "
        f"{settings.rounds} rounds alternate the targets. Sequential: up to {settings.requests} "
        f"requests in all (after {settings.warmup} warm-up; a round stops after "
        f"{settings.seq_seconds:g} s) on one connection; p50/p99 over all of them. Concurrent: "
        f"{settings.clients} closed-loop keep-alive clients counted for {settings.duration:g} s "
        f"after {settings.conc_warmup:g} s per round; the median round (lowest–highest). CPU/call "
        "is the serving process's CPU time (all threads) per call under that load. The client, "
        "the proxies and the upstream share the machine's cores.",
        "",
        f"| target | p50 ms | p99 ms | n | p50 added over direct ms "
        f"| calls/s, {settings.clients} clients | CPU ms/call | errors |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for target in ("direct", "bare", "metered"):
        f = by[target]
        lines.append(
            f"| {TARGET_NAMES[target]} | {f.p50_ms:.2f} | {f.p99_ms:.2f} | {f.samples} "
            f"| {f.p50_ms - direct.p50_ms:+.2f} | {f.calls_per_s:.0f} "
            f"({f.rate_range[0]:.0f}–{f.rate_range[1]:.0f}) | {f.cpu_ms_per_call:.2f} "
            f"| {f.errors} |"
        )
    bare_added = by["bare"].p50_ms - direct.p50_ms
    metered_added = by["metered"].p50_ms - direct.p50_ms
    overhead = metered_added / bare_added if bare_added > 0 else float("inf")
    rate = by["metered"].calls_per_s / by["bare"].calls_per_s
    chunk_ms = settings.chunk_ms
    ttfb_added = st["metered"].first_data_ms - st["direct"].first_data_ms
    relayed = all(
        st[t].chunks >= settings.chunks - 1 and st[t].first_data_ms < st[t].last_byte_ms / 2
        for t in ("metered", "metered_hidden")
    )
    lines += [
        "",
        "| figure (same run) | value | target |",
        "|---|---:|---|",
        f"| metered overhead / bare overhead (p50 added over direct: {metered_added:.2f} / "
        f"{bare_added:.2f} ms) | {overhead:.2f} ({_verdict(overhead <= MAX_OVERHEAD_RATIO)}) "
        f"| <= {MAX_OVERHEAD_RATIO} |",
        f"| metered calls/s / bare calls/s ({settings.clients} clients) | {rate:.2f} "
        f"({_verdict(rate >= MIN_RATE_RATIO)}) | >= {MIN_RATE_RATIO} |",
        f"| streamed: metered first event − direct first event | {ttfb_added:+.1f} ms "
        f"({_verdict(ttfb_added < chunk_ms)}) | < {chunk_ms:g} ms (before the upstream's "
        "second event) |",
        f"| streamed: relayed chunk by chunk (metered, both variants) | "
        f"{'yes' if relayed else 'no'} ({_verdict(relayed)}) | every upstream write arrives "
        "as it is sent |",
        f"| durable ledger settlements/s (`SettlementWriter`, fsync per entry) "
        f"| {ledger.batched:.0f} ({_verdict(ledger.batched >= MIN_SETTLEMENTS)}) "
        f"| >= {MIN_SETTLEMENTS:.0f} |",
        "",
        f"Streamed chat reply: the upstream sends {settings.chunks} SSE writes "
        f"{chunk_ms:g} ms apart (the first at once; the last carries the finish chunk, the usage "
        f"chunk and `[DONE]`); median of {streams[0].samples} per target, one at a time: "
        f"{getattr(settings, 'stream_gap_ms', 0):g} ms after each, then until its target's "
        f"process has used no CPU for {SETTLE_WINDOW_S * 1000:g} ms (`bench.proxybench.settle`), "
        "the targets taking turns "
        "stream by stream (so each samples the same moments of the machine), times "
        "from sending the request. The arm asks for `stream_options.include_usage` except in the "
        "hidden variant, where the proxy asks for it, rewrites the body and removes the usage "
        "chunk from the relayed stream.",
        "",
        "| target | response head (TTFB) ms | first body bytes ms | last byte ms "
        "| HTTP chunks received | streams |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for s in streams:
        streamed = "yes" if s.first_data_ms < s.last_byte_ms / 2 else "**no** (buffered)"
        lines.append(
            f"| {TARGET_NAMES[s.target]} | {s.head_ms:.1f} | {s.first_data_ms:.1f} "
            f"| {s.last_byte_ms:.1f} | {s.chunks:.0f} | {streamed} |"
        )
    lines += [
        "",
        "Durable ledger settlements (`bench/ledger_bench.py`'s measurements, run by this bench on "
        "the repository's disk, a fresh ledger each, every entry fsynced):",
        "",
        "| mode | settlements/s |",
        "|---|---:|",
        f"| one call per entry (`Ledger.settle_calls([one])`, the floor: one fsync per call) "
        f"| {ledger.single:.0f} |",
        f"| `SettlementWriter`, 8 threads ({ledger.batched_calls} calls in "
        f"{ledger.batched_entries} entries; what the live proxy uses) | {ledger.batched:.0f} |",
        f"| 4 processes × {ledger.per_process} calls, one call per entry (lock contention) "
        f"| {ledger.processes:.0f} |",
        "",
        f"Check of the metered run: {check.calls} calls in its call log, {check.ok} of them `ok` "
        f"and priced from the upstream's usage, ${check.cost_usd} booked; `harness ledger "
        f"verify`: {check.ledger_verify}.",
    ]
    return "\n".join(lines) + "\n"


def write_section(path: Path, section: str) -> None:
    """Replace this bench's section of `path`, or append it; other sections stay."""
    replace_section(path, SECTION, section)


def save_figures(
    path: Path,
    plain: list[PlainFigures],
    streams: list[StreamFigures],
    ledger: LedgerFigures,
    check: MeteredCheck,
    facts: object,
) -> None:
    """One run's figures as JSON, for `bench.live_compare` to set runs side by side."""
    data = {
        "plain": [asdict(f) for f in plain],
        "streams": [asdict(s) for s in streams],
        "ledger": asdict(ledger),
        "check": asdict(check),
        "facts": facts,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1) + "\n")
