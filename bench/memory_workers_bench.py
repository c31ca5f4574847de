"""Issue 26's memory projection: a 50-session memory study's items per worker count, and the
projected time of 500 such items.

    .venv/bin/python -m bench.memory_workers_bench [--items 4] [--workers 1 2 4]

The synthetic LongMemEval-S-sized items of bench/memory_bench.py (50 history sessions of 10
messages each, every item its own history, so every item is ingested and snapshotted), recorded
by the `retrieval` arm with `--workers N` (local backend, clock on the seam only:
`HARNESS_FAKETIME=0`). Per N: the items' span (the first call's start to the last call's end in
calls.jsonl: start-up left out) and the speed-up over one worker. The 500-item projection takes
bench/memory_bench.py's per-item figure for an arm and divides it by the measured speed-up.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.memory_bench import synthetic_entry

REPO = Path(__file__).resolve().parents[1]
# bench/memory_bench.py's seconds per item, seam-only (BENCHMARKS.md, "Memory benchmarks").
PER_ITEM_S = {"retrieval": 14.7, "mem0": 24.1}


def write_study(folder: Path, items: int) -> Path:
    import tomli_w

    folder.mkdir(parents=True, exist_ok=True)
    entries = [synthetic_entry(n) for n in range(items)]
    (folder / "longmemeval_s.json").write_text(json.dumps(entries))
    study = {
        "name": "memory-workers-bench",
        "items": {"format": "longmemeval", "path": "longmemeval_s.json"},
        "deadline_ms": 60000,
        "ingest_deadline_ms": 120000,
        "arms": {"retrieval": {"command": f"{sys.executable} -m arms.retrieval", "env": {}}},
    }
    path = folder / "study.toml"
    path.write_text(tomli_w.dumps(study))
    return path


def record(study: Path, runs: Path, workers: int) -> tuple[float, float]:
    """(whole command s, items span s)."""
    env = {**os.environ, "HARNESS_NO_PROGRESS": "1", "HARNESS_FAKETIME": "0"}
    command = [sys.executable, "-m", "harness.cli", "record", str(study), "--run-dir", str(runs)]
    command += ["--isolation", "local", "--workers", str(workers)]
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=REPO)
    wall = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"workers {workers}: the run failed\n{done.stdout}{done.stderr[-3000:]}")
    (run,) = [p for p in runs.iterdir() if (p / "run.json").exists()]
    calls = [json.loads(x) for x in (run / "calls.jsonl").read_text().splitlines() if x]
    span = max(c["timing"]["end"] for c in calls) - min(c["timing"]["start"] for c in calls)
    return wall, span


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=4)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    args = parser.parse_args()
    rows = []
    loads = []
    with tempfile.TemporaryDirectory(prefix="memory-workers-") as tmp:
        study = write_study(Path(tmp) / "study", args.items)
        for workers in args.workers:
            loads.append(os.getloadavg()[0])
            wall, span = record(study, Path(tmp) / f"runs{workers}", workers)
            loads.append(os.getloadavg()[0])
            rows.append((workers, wall, span))
            print(f"workers {workers}: {wall:.1f} s whole, {span:.1f} s items", flush=True)
    base = rows[0][2]
    print(
        f"{os.cpu_count()} cores, Python {platform.python_version()}, load average "
        f"{min(loads):.2f} to {max(loads):.2f}; {args.items} items of 50 sessions, retrieval arm"
    )
    print("| workers | whole command | items span | s per item | speed-up | 500 items, retrieval "
          "(14.7 s/item) | 500 items, mem0 (24.1 s/item) |")  # fmt: skip
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for workers, wall, span in rows:
        up = base / span
        hours = {arm: 500 * s / up / 3600 for arm, s in PER_ITEM_S.items()}
        print(
            f"| {workers} | {wall:.0f} s | {span:.0f} s | {span / args.items:.1f} | {up:.2f}x "
            f"| {hours['retrieval']:.1f} h | {hours['mem0']:.1f} h |"
        )


if __name__ == "__main__":
    main()
