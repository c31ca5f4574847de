"""What the wall-time benches of issue 5 (`bench.gate_audit_bench`, `bench.replay_bench`) share:
timing a `harness` command as a process from start to exit (what a user waits for), the opening
of their BENCHMARKS.md sections, and their command line (`--rounds`, `--write`).
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from bench.markdown import replace_section

REPO = Path(__file__).resolve().parents[1]
QUICKSTART = REPO / "examples" / "quickstart" / "study.toml"
TARGET_S = 60.0  # issue 5: each command under a minute on 2 cores

Figures = dict[str, object]


def harness(
    *args: str, env: dict[str, str] | None = None
) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Run `harness ARGS` from the repository root; its wall time and its result. `env` is added
    to this process's environment."""
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", "--log-json", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "HARNESS_NO_PROGRESS": "1", **(env or {})},
        timeout=600,
    )
    return time.monotonic() - started, done


def measured(section: str, module: str, figures: Figures) -> str:
    """A section's heading and its first paragraph: when, where, the load (`figures` holds
    `load_before` and `load_after`), and how to repeat it."""
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return (
        f"## {section}\n\n"
        f"Measured {stamp} on {os.cpu_count()} cores, Python {platform.python_version()}; load "
        f"average {figures['load_before']:.2f} before, {figures['load_after']:.2f} after (other "
        "work shares this machine). Repeat from the repository root with:\n\n"
        f"```sh\n.venv/bin/python -m {module} --write BENCHMARKS.md\n```\n\n"
    )


def main(
    doc: str,
    section: str,
    rounds: int,
    measure: Callable[[int], Figures],
    render: Callable[[Figures], str],
) -> None:
    """Measure `--rounds` times, print the section and, with `--write FILE`, replace the section
    titled `section` in FILE (other sections stay)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=rounds)
    parser.add_argument("--write", type=Path, help="Update this Markdown file's section.")
    args = parser.parse_args()
    text = render(measure(args.rounds))
    print(text)
    if args.write:
        replace_section(args.write, section, text)
