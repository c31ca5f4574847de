"""Wall time of `harness replay` on the quickstart study (issue 5: under a minute on 2 cores).

    .venv/bin/python -m bench.replay_bench [--rounds 3] [--write BENCHMARKS.md]

Records the quickstart once (local isolation), then replays it `--rounds` times with no vendor
key in the environment, timing each `harness replay` process from start to exit: what a user
waits for, proxy and arm start-up included. Every replay must come out clean.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from bench.markdown import replace_section

REPO = Path(__file__).resolve().parents[1]
QUICKSTART = REPO / "examples" / "quickstart" / "study.toml"
SECTION = "Replay of the quickstart (issue 5)"
TARGET_S = 60.0


def _harness(*args: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    env = {**os.environ, "HARNESS_NO_PROGRESS": "1", "OPENAI_API_KEY": "", "ANTHROPIC_API_KEY": ""}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", "--log-json", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=600,
    )
    return time.monotonic() - started, done


def _mode_runs(root: Path, mode: str) -> list[Path]:
    return sorted(
        p
        for p in root.iterdir()
        if (p / "run.json").exists() and json.loads((p / "run.json").read_text())["mode"] == mode
    )


def measure(rounds: int) -> dict[str, object]:
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="replay-bench-") as tmp:
        root = Path(tmp)
        record_s, done = _harness(
            "record", str(QUICKSTART), "--run-dir", tmp, "--isolation", "local"
        )
        if done.returncode != 0:
            raise SystemExit(f"record failed:\n{done.stderr[-3000:]}")
        source = _mode_runs(root, "record")[0]
        times = []
        for _ in range(rounds):
            elapsed, done = _harness("replay", str(source), "--isolation", "local")
            if done.returncode != 0 or "replay CLEAN" not in done.stdout:
                raise SystemExit(f"replay not clean:\n{done.stdout}\n{done.stderr[-3000:]}")
            times.append(elapsed)
        replay = _mode_runs(root, "replay")[-1]
        comparison = json.loads((replay / "replay.json").read_text())
    return {
        "record_s": record_s,
        "replay_s": times,
        "calls": comparison["calls_replayed"],
        "turns": comparison["turns_compared"],
        "load_before": load_before,
        "load_after": os.getloadavg()[0],
    }


def render(figures: dict[str, object]) -> str:
    times: list[float] = figures["replay_s"]  # type: ignore[assignment]
    median = statistics.median(times)
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    verdict = "met" if max(times) < TARGET_S else "NOT met"
    return (
        f"## {SECTION}\n\n"
        f"Measured {stamp} on {os.cpu_count()} cores, Python {platform.python_version()}; load "
        f"average {figures['load_before']:.2f} before, {figures['load_after']:.2f} after (other "
        "work shares this machine). Repeat from the repository root with:\n\n"
        "```sh\n.venv/bin/python -m bench.replay_bench --write BENCHMARKS.md\n```\n\n"
        "The quickstart (2 arms, 3 items, 3 turns each) is recorded once, then `harness replay "
        "RUN_DIR --isolation local` runs with no vendor key; each figure is the whole command's "
        "wall time, proxy and arm start-up included, and every replay came out clean "
        f"({figures['calls']} requests and {figures['turns']} turn texts reproduced).\n\n"
        "| step | wall s |\n|---|---:|\n"
        f"| `harness record` (once) | {figures['record_s']:.1f} |\n"
        f"| `harness replay`, median of {len(times)} | {median:.1f} |\n"
        f"| `harness replay`, slowest | {max(times):.1f} |\n\n"
        f"Target: replay of the quickstart under {TARGET_S:.0f} s on 2 cores: {verdict}.\n"
    )


def write_section(path: Path, section: str) -> None:
    """Replace this bench's section of `path`, or append it; other sections stay."""
    replace_section(path, SECTION, section)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--write", type=Path, help="Update this Markdown file's section.")
    args = parser.parse_args()
    section = render(measure(args.rounds))
    print(section)
    if args.write:
        write_section(args.write, section)


if __name__ == "__main__":
    main()
