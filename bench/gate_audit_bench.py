"""Wall time of `harness gate` and `harness audit` on the quickstart (issue 5: each under a
minute on 2 cores).

    .venv/bin/python -m bench.gate_audit_bench [--rounds 2] [--write BENCHMARKS.md]

Times each command as a process from start to exit, which is what a user waits for: the gate's
two record runs (proxy and arm start-up included) and the comparison; the audit's re-pricing and
re-hashing of one of the gate's runs. Every gate must pass and every audit must come out clean.
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
SECTION = "Gate and audit of the quickstart (issue 5)"
TARGET_S = 60.0


def _harness(*args: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", "--log-json", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "HARNESS_NO_PROGRESS": "1"},
        timeout=600,
    )
    return time.monotonic() - started, done


def measure(rounds: int) -> dict[str, object]:
    load_before = os.getloadavg()[0]
    gates, audits, calls = [], [], 0
    for _ in range(rounds):
        with tempfile.TemporaryDirectory(prefix="gate-bench-") as tmp:
            elapsed, done = _harness(
                "gate", str(QUICKSTART), "--run-dir", tmp, "--isolation", "local"
            )
            if done.returncode != 0:
                raise SystemExit(f"gate failed:\n{done.stdout}\n{done.stderr[-3000:]}")
            gates.append(elapsed)
            gate = json.loads(next(Path(tmp).glob("*/gate.json")).read_text())
            calls = gate["counts"]["calls_compared"]
            for run in gate["runs"]:
                elapsed, done = _harness("audit", run["run_dir"])
                if done.returncode != 0:
                    raise SystemExit(f"audit failed:\n{done.stdout}\n{done.stderr[-3000:]}")
                audits.append(elapsed)
    return {
        "gate_s": gates,
        "audit_s": audits,
        "calls": calls,
        "load_before": load_before,
        "load_after": os.getloadavg()[0],
    }


def render(figures: dict[str, object]) -> str:
    gates: list[float] = figures["gate_s"]  # type: ignore[assignment]
    audits: list[float] = figures["audit_s"]  # type: ignore[assignment]
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    verdict = "met" if max(gates) < TARGET_S and max(audits) < TARGET_S else "NOT met"
    return (
        f"## {SECTION}\n\n"
        f"Measured {stamp} on {os.cpu_count()} cores, Python {platform.python_version()}; load "
        f"average {figures['load_before']:.2f} before, {figures['load_after']:.2f} after (other "
        "work shares this machine). Repeat from the repository root with:\n\n"
        "```sh\n.venv/bin/python -m bench.gate_audit_bench --write BENCHMARKS.md\n```\n\n"
        "`harness gate examples/quickstart/study.toml --isolation local` runs the quickstart "
        "(2 arms, 3 items, 3 turns each) twice in record mode from fresh processes and compares "
        f"its {figures['calls']} requests; `harness audit RUN_DIR` then re-prices every call and "
        "re-hashes every body and manifest file of one of those runs. Each figure is the whole "
        "command's wall time, start-up included; every gate passed and every audit was clean.\n\n"
        "| command | runs | median wall s | slowest wall s |\n|---|---:|---:|---:|\n"
        f"| `harness gate` | {len(gates)} | {statistics.median(gates):.1f} | {max(gates):.1f} |\n"
        f"| `harness audit` | {len(audits)} | {statistics.median(audits):.1f} | "
        f"{max(audits):.1f} |\n\n"
        f"Target: gate and audit of the quickstart each under {TARGET_S:.0f} s on 2 cores: "
        f"{verdict}.\n"
    )


def write_section(path: Path, section: str) -> None:
    """Replace this bench's section of `path`, or append it; other sections stay."""
    replace_section(path, SECTION, section)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--write", type=Path, help="Update this Markdown file's section.")
    args = parser.parse_args()
    section = render(measure(args.rounds))
    print(section)
    if args.write:
        write_section(args.write, section)


if __name__ == "__main__":
    main()
