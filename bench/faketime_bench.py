"""Clock pinning: what libfaketime costs a syscall-heavy arm, and how stale each setting leaves
a clock that moves between items (issue 9).

    .venv/bin/python -m bench.faketime_bench [--calls 100000] [--trials 8] [--write BENCHMARKS.md]

A child Python process runs `--calls` rounds of `time.time()`, `datetime.now()` and `os.stat()`
(what a busy arm does between model calls) under each setting; it times its own loop, so
interpreter start-up is left out. Wall time is `time.perf_counter()` (monotonic: libfaketime is
told to leave it real) and user/sys time come from `os.times()`.

Staleness: the child starts pinned at "+0", the bench rewrites the timestamp file to "+86400"
(as `pin_clock` does when the next item starts) at a random point of a second, and the child
reports how long after the write its wall clock showed the new day. Both processes read the
same CLOCK_MONOTONIC, so the delay is measured on one clock.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from bench.markdown import replace_section

SECTION = "Clock pinning"
LIBFAKETIME = next(iter(sorted(glob.glob("/usr/lib/*/faketime/libfaketime.so.1"))), "")
REAL = {"DONT_FAKE_MONOTONIC": "1", "FAKETIME_DONT_FAKE_MONOTONIC": "1"}

LOOP = """
import os, sys, time, json
from datetime import datetime
n, path = int(sys.argv[1]), sys.argv[2]
t0, c0 = time.perf_counter(), os.times()
for _ in range(n):
    time.time(); datetime.now(); os.stat(path)
t1, c1 = time.perf_counter(), os.times()
print(json.dumps({"wall": t1 - t0, "user": c1.user - c0.user, "sys": c1.system - c0.system}))
"""

# Polls the wall clock (as an arm's own work would, about every 100 us) until it jumps a day
# ahead, then prints the monotonic time it saw the jump at. select, not time.sleep: Python 3.11's
# sleep (clock_nanosleep on an absolute monotonic time) fails with EINVAL under libfaketime 0.9.10
# with DONT_FAKE_MONOTONIC (wolfcw/libfaketime#426).
WATCH = """
import select, time
print("ready", flush=True)
start = time.time()
while time.time() - start < 43200:
    select.select([], [], [], 0.0001)
print(time.monotonic(), flush=True)
"""

# name -> (what it is, extra environment; CLOCK is replaced by the timestamp file's path)
SETTINGS: dict[str, tuple[str, dict[str, str]]] = {
    "none": ("no libfaketime", {}),
    "no_cache": (
        "timestamp file, `FAKETIME_NO_CACHE=1` (what the backends did)",
        {"FAKETIME_TIMESTAMP_FILE": "CLOCK", "FAKETIME_NO_CACHE": "1"},
    ),
    "cache_1": (
        "timestamp file, `FAKETIME_CACHE_DURATION=1`",
        {"FAKETIME_TIMESTAMP_FILE": "CLOCK", "FAKETIME_CACHE_DURATION": "1"},
    ),
    "cache_0": (
        "timestamp file, `FAKETIME_CACHE_DURATION=0` (re-read once a second)",
        {"FAKETIME_TIMESTAMP_FILE": "CLOCK", "FAKETIME_CACHE_DURATION": "0"},
    ),
    "cache_default": (
        "timestamp file, libfaketime's default cache (10 s)",
        {"FAKETIME_TIMESTAMP_FILE": "CLOCK"},
    ),
    "env_spec": ("`FAKETIME=+86400` (fixed for the process's life)", {"FAKETIME": "+86400"}),
    "no_cache_no_stat": (
        "timestamp file, `FAKETIME_NO_CACHE=1`, `NO_FAKE_STAT=1`",
        {"FAKETIME_TIMESTAMP_FILE": "CLOCK", "FAKETIME_NO_CACHE": "1", "NO_FAKE_STAT": "1"},
    ),
}


STALENESS = ("no_cache", "cache_1", "cache_0", "cache_default")


def environment(setting: str, clock: Path) -> dict[str, str]:
    env = {"PATH": os.environ.get("PATH", ""), "TZ": "UTC"}
    extra = SETTINGS[setting][1]
    if not extra:
        return env
    env |= REAL | {"LD_PRELOAD": LIBFAKETIME}
    return env | {k: str(clock) if v == "CLOCK" else v for k, v in extra.items()}


def cost(setting: str, calls: int, clock: Path) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", LOOP, str(calls), __file__],
        env=environment(setting, clock),
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(out.stdout))


def staleness(setting: str, clock: Path, rng: random.Random) -> float:
    """Seconds from rewriting the file until the child's wall clock showed the new offset."""
    clock.write_text("+0\n")
    child = subprocess.Popen(
        [sys.executable, "-c", WATCH],
        env=environment(setting, clock),
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    child.stdout.readline()
    # Let the child settle into its cache, then write at a random phase of the second.
    time.sleep(1.2 + rng.random())
    tmp = clock.with_suffix(".tmp")
    tmp.write_text("+86400\n")
    written = time.monotonic()
    os.replace(tmp, clock)
    try:
        seen, _ = child.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
        return float("inf")
    return float(seen.strip()) - written


def measure(calls: int, rounds: int, trials: int) -> dict[str, object]:
    rng = random.Random(9)
    load_before = os.getloadavg()[0]
    results: dict[str, dict[str, object]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        clock = Path(scratch) / "faketime"
        clock.write_text("+86400\n")
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in SETTINGS}
        for _ in range(rounds):  # alternate the settings: load drifts, every one sees it
            for name in SETTINGS:
                runs[name].append(cost(name, calls, clock))
        for name, samples in runs.items():
            results[name] = {k: statistics.median(s[k] for s in samples) for k in samples[0]}
        for name in STALENESS:
            delays = [staleness(name, clock, rng) for _ in range(trials)]
            results[name]["stale_median"] = statistics.median(delays)
            results[name]["stale_max"] = max(delays)
    return {
        "results": results,
        "calls": calls,
        "rounds": rounds,
        "trials": trials,
        "load": (load_before, os.getloadavg()[0]),
        "when": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "libfaketime": LIBFAKETIME,
    }


def render(figures: dict[str, object], command: str) -> str:
    results: dict[str, dict[str, float]] = figures["results"]  # type: ignore[assignment]
    base = results["none"]
    load = figures["load"]
    assert isinstance(load, tuple)
    lines = [
        f"## {SECTION}",
        "",
        f"Measured {figures['when']} on {figures['cores']} cores, Python {figures['python']}, "
        f"Debian libfaketime 0.9.10; load average {load[0]:.2f} before, {load[1]:.2f} after. "
        f"A child process runs {figures['calls']:,} rounds of `time.time()` + `datetime.now()` + "
        f"`os.stat()`; median of {figures['rounds']} rounds per setting, alternated. Staleness: "
        "the timestamp file is rewritten (a new item's clock) while the child polls its clock "
        f"every 0.1 ms; median and worst of {figures['trials']} writes. Repeat with:",
        "",
        "```sh",
        command,
        "```",
        "",
        "| setting | wall s | sys s | user s | wall / none | sys / none | stale after a rewrite |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for name, (label, _) in SETTINGS.items():
        r = results[name]
        stale = (
            f"{r['stale_median']:.2f} s (worst {r['stale_max']:.2f} s)"
            if "stale_median" in r
            else ("never moves (one clock per process)" if name == "env_spec" else "-")
        )
        lines.append(
            f"| {label} | {r['wall']:.2f} | {r['sys']:.2f} | {r['user']:.2f} | "
            f"{r['wall'] / base['wall']:.1f} | "
            f"{r['sys'] / max(base['sys'], 0.005):.1f} | {stale} |"
        )
    chosen, old = results["cache_0"], results["no_cache"]
    lines += [
        "",
        "The backends (harness/isolation/clock.py) use `FAKETIME_CACHE_DURATION=0`: "
        f"{chosen['wall'] / base['wall']:.1f}x the wall time of no libfaketime, against "
        f"{old['wall'] / base['wall']:.1f}x for `FAKETIME_NO_CACHE=1`. Its clock can be stale "
        f"until the next real second (worst here {chosen['stale_max']:.2f} s), which `pin_clock` "
        "waits out after each write: at most about a second per item and arm, no cost per clock "
        "call. A `FAKETIME` spec is as cheap but fixed for the process's life, so each item "
        "would need a fresh arm process (a restart per item); `FAKETIME_CACHE_DURATION=1` left "
        f"the clock stale up to {results['cache_1']['stale_max']:.2f} s and the default cache "
        f"{results['cache_default']['stale_max']:.2f} s. `NO_FAKE_STAT=1` does not help: the "
        "cost is the file read on every clock call, not the faked stat.",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--trials", type=int, default=8)
    parser.add_argument("--write", type=Path, help="Update this Markdown file's section.")
    args = parser.parse_args()
    if not LIBFAKETIME:
        sys.exit("libfaketime is not installed (Debian: apt-get install libfaketime)")
    command = (
        f".venv/bin/python -m bench.faketime_bench --calls {args.calls} --rounds {args.rounds} "
        f"--trials {args.trials}" + (f" --write {args.write}" if args.write else "")
    )
    text = render(measure(args.calls, args.rounds, args.trials), command)
    print(text)
    if args.write:
        replace_section(args.write, SECTION, text)


if __name__ == "__main__":
    main()
