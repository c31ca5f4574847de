"""Issue 26's workers figure: record-mode turns per second with 1, 2 and 4 workers.

    .venv/bin/python -m bench.workers_bench [--items 24] [--workers 1 2 4] [--write BENCHMARKS.md]

The quickstart's two arms and stubs over `--items` items (the quickstart's three, repeated
under new ids), recorded with `harness record --isolation local --workers N` as a process, every
run required to pass. Two figures per N: the turns over the whole command (start-up of 2N arms
included, as a user waits for it), and the turns over the span from the first call's start to
the last call's end in calls.jsonl (the items' part, which workers parallelise). The machine's
load average is written beside them: other work shares it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from bench.markdown import replace_section

REPO = Path(__file__).resolve().parents[1]
QUICKSTART = REPO / "examples" / "quickstart"
SECTION = "Workers: record-mode turns per second"
HARNESS = [sys.executable, "-m", "harness.cli"]


def make_study(folder: Path, count: int) -> int:
    """The quickstart with `count` items; returns the number of turns per arm."""
    shutil.copytree(QUICKSTART, folder)
    base = [json.loads(line) for line in (QUICKSTART / "items.jsonl").read_text().splitlines()]
    items = [dict(base[n % len(base)], id=f"{base[n % len(base)]['id']}-{n}") for n in range(count)]
    (folder / "items.jsonl").write_text("".join(json.dumps(item) + "\n" for item in items))
    study = (folder / "study.toml").read_text()
    (folder / "study.toml").write_text(study.replace('"../../ledger.jsonl"', '"ledger.jsonl"'))
    return sum(len(item["turns"]) for item in items)


def record(study: Path, runs: Path, workers: int) -> tuple[float, float, int]:
    """(whole command s, first call to last call s, turns recorded)."""
    env = {**os.environ, "HARNESS_NO_PROGRESS": "1"}
    command = [*HARNESS, "record", str(study), "--run-dir", str(runs)]
    command += ["--isolation", "local", "--workers", str(workers)]
    start = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=REPO)
    wall = time.monotonic() - start
    if done.returncode != 0:
        raise SystemExit(f"workers {workers}: the run failed\n{done.stdout}{done.stderr[-3000:]}")
    run = next(p for p in runs.iterdir() if (p / "run.json").exists())
    calls = [json.loads(line) for line in (run / "calls.jsonl").read_text().splitlines()]
    span = max(c["timing"]["end"] for c in calls) - min(c["timing"]["start"] for c in calls)
    turns = sum(1 for line in (run / "turns.jsonl").read_text().splitlines() if line.strip())
    return wall, span, turns


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=24)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--write", type=Path, help="replace this section of BENCHMARKS.md")
    args = parser.parse_args()
    rows = []
    loads = []
    for workers in args.workers:
        with tempfile.TemporaryDirectory(prefix="workers-bench-") as tmp:
            study_dir = Path(tmp) / "study"
            make_study(study_dir, args.items)
            loads.append(os.getloadavg()[0])
            wall, span, turns = record(study_dir / "study.toml", Path(tmp) / "runs", workers)
            loads.append(os.getloadavg()[0])
        rows.append((workers, turns, wall, span))
        print(f"workers {workers}: {turns} turns, {turns / wall:.1f}/s whole, "
              f"{turns / span:.1f}/s items ({wall:.1f} s, {span:.1f} s)", flush=True)  # fmt: skip
    first = rows[0]
    table = [
        "| workers | turns | whole command | turns/s (whole) | items span | turns/s (items) "
        "| speed-up (items) |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for workers, turns, wall, span in rows:
        table.append(
            f"| {workers} | {turns} | {wall:.1f} s | {turns / wall:.1f} | {span:.1f} s "
            f"| {turns / span:.1f} | {first[3] / span:.2f}x |"
        )
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    section = "\n".join(
        [
            f"## {SECTION}",
            "",
            f"Measured {when} on {os.cpu_count()} cores, Python {platform.python_version()}; "
            f"load average {min(loads):.2f} to {max(loads):.2f} during the runs (other work "
            "shares this machine, so the speed-ups are a floor, not a ceiling). The quickstart's "
            f"two arms over {args.items} items, record mode, local backend. Repeat from the "
            "repository root with:",
            "",
            "```sh",
            f".venv/bin/python -m bench.workers_bench --items {args.items} --write BENCHMARKS.md",
            "```",
            "",
            *table,
            "",
            "*Whole command* includes starting 2N arms one at a time and the checks; *items span* "
            "is the first call's start to the last call's end in calls.jsonl. Target (issue 26): "
            "at least 0.8N speed-up until the machine's cores are busy, then flat, not worse. "
            "Much of a record-mode turn is waiting, not computing: where libfaketime pins the "
            "arms' clocks, each item on each arm waits up to a second for the pin to settle "
            "(harness/isolation/clock.py), and workers overlap those waits, so N workers can "
            "beat the core count.",
            "",
        ]
    )
    print(section)
    if args.write:
        replace_section(args.write, SECTION, section)


if __name__ == "__main__":
    main()
