"""`harness --help` start-up time, before and after lazy command loading (issue 11: under 0.35 s).

    .venv/bin/python -m bench.cli_bench [--runs 15] [--before REV] [--write BENCHMARKS.md]

Each round starts, in turn, a bare interpreter (`python -c pass`: the floor no CLI can beat), the
tree's `harness --help` (through `python -c`, as the old revision must be run, and through the
venv's `harness` console script) and, with `--before REV`, that revision's `harness --help` (its
files taken with `git archive` into bench/results/, run from there so its own modules load). Every
figure is a whole process, start to exit: the wall time a user waits and the CPU time it burns.
On a shared machine the CPU time is the steadier figure (wall time includes waiting for a core).
It also lists which heavy packages each target's start-up imports, and the `-X importtime` total
of `import harness.cli` and `import harness.study`.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from bench.markdown import replace_section

REPO = Path(__file__).resolve().parents[1]
SECTION = "CLI start-up: harness --help"
TARGET_S = 0.35
# The last revision whose harness/cli/__init__.py imported every command module up front.
BEFORE_REV = "840f9d7"
HEAVY = (
    *("pydantic", "ledger", "docker", "cryptography", "anthropic", "openai", "mitmproxy"),
    *("structlog", "rich", "proxy", "stubs", "numpy", "scipy", "hypothesis", "jsonschema"),
)


def timed(argv: list[str], cwd: Path) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    subprocess.run(argv, cwd=cwd, check=True, stdout=subprocess.DEVNULL, timeout=120)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu


def heavy_imports(cwd: Path, statement: str) -> list[str]:
    probe = (
        f"import sys\n{statement}\n"
        f"print('heavy:', *(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=cwd, capture_output=True, text=True, timeout=120
    )
    for line in done.stderr.splitlines():
        if line.startswith("heavy:"):
            return line.split()[1:]
    return ["(probe failed)"]


def importtime_ms(cwd: Path, module: str) -> float:
    """The cumulative `-X importtime` figure of `module` (microseconds in the output)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {module}"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )
    for line in done.stderr.splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) == 3 and cells[2] == module:
            return int(cells[1]) / 1000
    return float("nan")


HELP_PROBE = (
    "import sys\nsys.argv = ['harness', '--help']\nfrom harness.cli import run\n"
    "try:\n    run()\nexcept SystemExit:\n    pass"
)


def checkout(rev: str) -> Path:
    """REV's files in bench/results/cli-REV (a process started there imports them, not the
    tree's: the interpreter puts its working folder first on sys.path for `-c`)."""
    folder = REPO / "bench" / "results" / f"cli-{re.sub(r'[^0-9A-Za-z_.-]', '_', rev)}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", rev], cwd=REPO, capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    return folder


def measure(runs: int, before: str | None) -> dict[str, object]:
    load_before = os.getloadavg()[0]
    targets: dict[str, tuple[list[str], Path]] = {
        "python -c pass": ([sys.executable, "-c", "pass"], REPO),
        "harness --help (this tree)": ([sys.executable, "-c", HELP_PROBE], REPO),
    }
    entry_point = Path(sys.executable).with_name("harness")
    if entry_point.exists():  # the console script a user runs (same code, its own start-up)
        targets["harness --help (entry point)"] = ([str(entry_point), "--help"], REPO)
    if before:
        old = checkout(before)
        targets[f"harness --help ({before})"] = ([sys.executable, "-c", HELP_PROBE], old)
    walls: dict[str, list[float]] = {name: [] for name in targets}
    cpus: dict[str, list[float]] = {name: [] for name in targets}
    for argv, cwd in targets.values():
        timed(argv, cwd)  # warm the page cache and the .pyc files
    for _ in range(runs):  # rounds alternate the targets, so load shifts hit them alike
        for name, (argv, cwd) in targets.items():
            wall, cpu = timed(argv, cwd)
            walls[name].append(wall)
            cpus[name].append(cpu)
    rows = []
    for name, (_argv, cwd) in targets.items():
        help_target = name.startswith("harness") and "entry point" not in name
        rows.append(
            {
                "target": name,
                "wall_median": statistics.median(walls[name]),
                "wall_min": min(walls[name]),
                "cpu_median": statistics.median(cpus[name]),
                "heavy": heavy_imports(cwd, HELP_PROBE) if help_target else [],
                "cli_ms": importtime_ms(cwd, "harness.cli") if help_target else None,
                "study_ms": importtime_ms(cwd, "harness.study") if help_target else None,
            }
        )
    return {
        "runs": runs,
        "rows": rows,
        "load_before": load_before,
        "load_after": os.getloadavg()[0],
    }


def render(figures: dict[str, object], command: str) -> str:
    rows = figures["rows"]
    assert isinstance(rows, list)
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"## {SECTION}",
        "",
        f"Measured {stamp} on {os.cpu_count()} cores, Python {platform.python_version()}; load "
        f"average {figures['load_before']:.2f} before, {figures['load_after']:.2f} after (other "
        "work shares this machine, so wall time includes waiting for a core; CPU time is the "
        "steadier figure). Repeat from the repository root with:",
        "",
        f"```sh\n{command}\n```",
        "",
        f"Each target run {figures['runs']} times, alternating; medians. `-X importtime` is the "
        "cumulative figure of the module's import (one run, inflated by load like wall time).",
        "",
        "| target | wall median s | wall min s | CPU median s | importtime harness.cli ms | "
        "importtime harness.study ms | heavy packages imported by --help |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for row in rows:
        cli_ms, study_ms = row["cli_ms"], row["study_ms"]
        lines.append(
            f"| {row['target']} | {row['wall_median']:.3f} | {row['wall_min']:.3f} | "
            f"{row['cpu_median']:.3f} | {'' if cli_ms is None else f'{cli_ms:.0f}'} | "
            f"{'' if study_ms is None else f'{study_ms:.0f}'} | "
            f"{', '.join(row['heavy']) or ('none' if row['cli_ms'] is not None else '')} |"
        )
    tree = next(r for r in rows if r["target"] == "harness --help (this tree)")
    met = tree["cpu_median"] < TARGET_S
    lines += [
        "",
        f"Target: `harness --help` under {TARGET_S} s. CPU median {tree['cpu_median']:.3f} s "
        f"(what a quiet machine waits): {'met' if met else 'NOT met'}; wall median "
        f"{tree['wall_median']:.3f} s at this load.",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--before", default=BEFORE_REV, help="A revision to compare (or '').")
    parser.add_argument("--write", type=Path, help="Update this Markdown file's section.")
    args = parser.parse_args()
    command = f".venv/bin/python -m bench.cli_bench --runs {args.runs} --write BENCHMARKS.md"
    text = render(measure(args.runs, args.before or None), command)
    print(text)
    if args.write:
        replace_section(args.write, SECTION, text)


if __name__ == "__main__":
    main()
