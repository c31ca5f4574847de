"""Wall time of `harness replay` on the quickstart study (issue 5: under a minute on 2 cores).

    .venv/bin/python -m bench.replay_bench [--rounds 3] [--write BENCHMARKS.md]

Records the quickstart once (local isolation), then replays it `--rounds` times with no vendor
key in the environment, timing each `harness replay` process from start to exit: what a user
waits for, proxy and arm start-up included. Every replay must come out clean.
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
from pathlib import Path

from bench import walltime
from bench.walltime import QUICKSTART, TARGET_S, Figures, harness

SECTION = "Replay of the quickstart"
NO_KEYS = {"OPENAI_API_KEY": "", "ANTHROPIC_API_KEY": ""}  # a replay must need no vendor key


def _mode_runs(root: Path, mode: str) -> list[Path]:
    return sorted(
        p
        for p in root.iterdir()
        if (p / "run.json").exists() and json.loads((p / "run.json").read_text())["mode"] == mode
    )


def measure(rounds: int) -> Figures:
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="replay-bench-") as tmp:
        root = Path(tmp)
        record_s, done = harness(
            "record", str(QUICKSTART), "--run-dir", tmp, "--isolation", "local", env=NO_KEYS
        )
        if done.returncode != 0:
            raise SystemExit(f"record failed:\n{done.stderr[-3000:]}")
        source = _mode_runs(root, "record")[0]
        times = []
        for _ in range(rounds):
            elapsed, done = harness("replay", str(source), "--isolation", "local", env=NO_KEYS)
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


def render(figures: Figures) -> str:
    times: list[float] = figures["replay_s"]  # type: ignore[assignment]
    median = statistics.median(times)
    verdict = "met" if max(times) < TARGET_S else "NOT met"
    return walltime.measured(SECTION, "bench.replay_bench", figures) + (
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


def main() -> None:
    walltime.main(__doc__ or "", SECTION, 3, measure, render)


if __name__ == "__main__":
    main()
