"""The live path side by side (issue 11): `bench.live_bench` runs saved with `--json`, one of the
proxy before a change (`--proxy-src` a `git worktree` of the older commit) and one after, set in
one table with bare mitmdump and LiteLLM, and the issue's targets as ratios within each run.

Run: `.venv/bin/python -m bench.live_compare --run before B.json --run after A.json --write
docs/benchmarks-history.md` (the table of every run is history; BENCHMARKS.md's "Live path side by
side" block holds the latest run's ratios).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from bench.markdown import replace_section

SECTION = "Live path side by side (issue 11)"
# Targets (issue 11, build 6), each a ratio within one run.
MAX_STREAM_RATIO = 1.3  # stream end-to-end added time, metered / bare streaming mitmdump
MAX_P99_RATIO = 1.5  # 32-client p99, metered / bare
MIN_RATE_RATIO = 0.8  # calls/s, metered / bare
MIN_LITELLM_RATIO = 6.0  # calls/s, metered / LiteLLM


def figures(run: dict[str, Any]) -> dict[str, float]:
    plain = {f["target"]: f for f in run["plain"]}
    streams = {s["target"]: s for s in run["streams"]}
    out: dict[str, float] = {}
    for t, f in plain.items():
        out[f"{t}.p50_added"] = f["p50_ms"] - plain["direct"]["p50_ms"]
        out[f"{t}.p99_32"] = f.get("conc_p99_ms", 0.0)
        out[f"{t}.rate"] = f["calls_per_s"]
        out[f"{t}.cpu"] = f["cpu_ms_per_call"]
    for t, s in streams.items():
        # What the path adds to the same stream (its end-to-end time minus the upstream's own
        # span: bench.vendor_upstream --timing-log), over what direct adds; runs saved before
        # the timing existed have only the paced last byte, whose jitter is larger.
        paced = s["last_byte_ms"] - streams["direct"]["last_byte_ms"]
        out[f"{t}.stream_paced"] = paced
        over, direct_over = s.get("overhead_ms"), streams["direct"].get("overhead_ms")
        timed = over is not None and direct_over is not None
        out[f"{t}.stream_added"] = over - direct_over if timed else paced
        for part in ("forward", "tail"):
            value, direct_value = s.get(f"{part}_ms"), streams["direct"].get(f"{part}_ms")
            if value is not None and direct_value is not None:
                out[f"{t}.stream_{part}"] = value - direct_value
    return out


def _ratio(a: float, b: float) -> float:
    # NaN, not infinity, when the other side measured nothing (LiteLLM completing no call in
    # a round's window on a saturated machine): a ratio not measured is not a target met.
    return a / b if b > 0 else float("nan")


def ratios(f: dict[str, float]) -> dict[str, float]:
    return {
        "stream": _ratio(f["metered.stream_added"], f["bare_streaming.stream_added"]),
        "p99": _ratio(f["metered.p99_32"], f["bare.p99_32"]),
        "rate": _ratio(f["metered.rate"], f["bare.rate"]),
        "litellm": _ratio(f["metered.rate"], f.get("litellm.rate", 0.0)),
        # CPU per call is steadier than calls/s when the machine is saturated.
        "litellm_cpu": _ratio(f.get("litellm.cpu", 0.0), f["metered.cpu"]),
        "bare_cpu": _ratio(f["metered.cpu"], f["bare.cpu"]),
    }


def _verdict(ok: bool) -> str:
    return "met" if ok else "**missed**"


def render(runs: dict[str, dict[str, Any]], tap: dict[str, float], command: str) -> str:
    lines = [f"## {SECTION}", ""]
    for name, run in runs.items():
        facts = run["facts"]
        busy = facts["machine"].get("busy")
        lines.append(
            f"- {name}: {facts['date']}, load average {facts['machine']['load']}, "
            + (f"{busy}, " if busy else "")
            + f"{facts['elapsed']:.0f} s: `{facts['command']}`"
        )
    lines += [
        "",
        "Repeat (a worktree of the older commit for `before`; same session, one after the other):",
        "",
        "```sh",
        command,
        "```",
        "",
        "Each run: the same client and fake vendor (`bench/vendor_upstream.py`) behind bare "
        "`mitmdump --mode reverse` (streams: with `stream_large_bodies=1`), LiteLLM's proxy "
        "(`bench/litellm_target.py`, its own venv, telemetry off, `api_base` on the fake vendor, "
        "a master key, no database) and the harness live proxy. The targets take turns (a "
        "round of load each, then a stream each), and each starts once the one before has gone "
        "idle (`bench.proxybench.settle`: LiteLLM's after-work otherwise fell on the target after "
        "it). Stream: 50 SSE writes 10 ms apart, one stream at a time, 24 per target; after "
        "each, 20 ms (as an arm reading the reply would leave), then until its target has been "
        "idle for 30 ms. End-to-end added: per stream, "
        "the client's end-to-end time minus the "
        "upstream's own span for that stream (request read to last byte written, logged by the "
        "upstream on the same monotonic clock), median, minus direct's; split into the request's "
        "way in (sent to read by the upstream) and the tail (last byte written to last byte "
        "read). The paced row (last byte minus the direct stream's last byte, two different "
        "streams) is what earlier runs had; the upstream's sleep jitter moves it by more than a "
        "proxy adds. 32-client p99: latency under the concurrent load, median of the rounds' "
        "p99.",
        "",
        "| figure | " + " | ".join(runs) + " |",
        "|---|" + "---:|" * len(runs),
    ]
    figs = {name: figures(run) for name, run in runs.items()}
    rows = [
        ("p50 added over direct, ms", "p50_added", ("bare", "litellm", "metered")),
        ("stream end-to-end added, ms", "stream_added", ("bare_streaming", "litellm", "metered")),
        ("stream added on the way in, ms", "stream_forward", ("bare_streaming", "metered")),
        ("stream added on the tail, ms", "stream_tail", ("bare_streaming", "metered")),
        ("stream paced last byte added, ms", "stream_paced", ("bare_streaming", "metered")),
        ("32-client p99, ms", "p99_32", ("direct", "bare", "litellm", "metered")),
        ("calls/s, 32 clients", "rate", ("direct", "bare", "litellm", "metered")),
        ("serving process CPU ms/call", "cpu", ("bare", "litellm", "metered")),
    ]
    for label, key, targets in rows:
        for t in targets:
            values = [figs[n].get(f"{t}.{key}") for n in runs]
            cells = " | ".join("–" if v is None else f"{v:.1f}" for v in values)
            lines.append(f"| {label}: {t} | {cells} |")
    if tap:
        lines.append(
            "| stream tap CPU per 50-event stream, ms (`bench/tap_bench.py`) | "
            + " | ".join(f"{tap[n]:.2f}" if n in tap else "–" for n in runs)
            + " |"
        )
    lines += ["", "| target (ratio within a run) | " + " | ".join(runs) + " |"]
    lines.append("|---|" + "---:|" * len(runs))
    checks = [
        ("stream added, metered / bare", "stream", lambda r: r <= MAX_STREAM_RATIO, "<= 1.3"),
        ("32-client p99, metered / bare", "p99", lambda r: r <= MAX_P99_RATIO, "<= 1.5"),
        ("calls/s, metered / bare", "rate", lambda r: r >= MIN_RATE_RATIO, ">= 0.8"),
        ("calls/s, metered / LiteLLM", "litellm", lambda r: r >= MIN_LITELLM_RATIO, ">= 6"),
        (
            "CPU/call, LiteLLM / metered (load-steady view of the above)",
            "litellm_cpu",
            lambda r: r >= MIN_LITELLM_RATIO,
            ">= 6",
        ),
        (
            "CPU/call, metered / bare (load-steady view of calls/s)",
            "bare_cpu",
            lambda r: r <= 1 / MIN_RATE_RATIO,
            "<= 1.25",
        ),
    ]
    rs = {name: ratios(f) for name, f in figs.items()}
    for label, key, ok, target in checks:
        cells = " | ".join(
            "not measured"
            if rs[n][key] != rs[n][key]
            else f"{rs[n][key]:.2f} ({_verdict(ok(rs[n][key]))})"
            for n in runs
        )
        lines.append(f"| {label} ({target}) | {cells} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--run", action="append", nargs=2, metavar=("NAME", "JSON"), default=[])
    parser.add_argument("--tap", action="append", nargs=2, metavar=("NAME", "MS"), default=[])
    parser.add_argument("--command", default="", help="how to repeat, for the section")
    parser.add_argument("--note", type=Path, help="a Markdown file of remarks to end with")
    parser.add_argument("--write", type=Path)
    args = parser.parse_args(argv)
    runs = {name: json.loads(Path(path).read_text()) for name, path in args.run}
    if not runs:
        parser.error("give at least one --run NAME JSON")
    section = render(runs, {n: float(ms) for n, ms in args.tap}, args.command)
    if args.note:
        section += "\n" + args.note.read_text()
    if args.write:
        replace_section(args.write, SECTION, section)
    print(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
