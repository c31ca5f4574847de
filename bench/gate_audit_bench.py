"""Wall time of `harness gate` and `harness audit` on the quickstart (issue 5: each under a
minute on 2 cores).

    .venv/bin/python -m bench.gate_audit_bench [--rounds 2] [--write BENCHMARKS.md]

Times each command as a process from start to exit, which is what a user waits for: the gate's
two record runs (proxy and arm start-up included) and the comparison; the audit's re-pricing and
re-hashing of one of the gate's runs. Every gate must pass and every audit must come out clean.
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
from pathlib import Path

from bench import walltime
from bench.walltime import QUICKSTART, TARGET_S, Figures, harness

SECTION = "Gate and audit of the quickstart"


def measure(rounds: int) -> Figures:
    load_before = os.getloadavg()[0]
    gates, audits, calls = [], [], 0
    for _ in range(rounds):
        with tempfile.TemporaryDirectory(prefix="gate-bench-") as tmp:
            elapsed, done = harness(
                "gate", str(QUICKSTART), "--run-dir", tmp, "--isolation", "local"
            )
            if done.returncode != 0:
                raise SystemExit(f"gate failed:\n{done.stdout}\n{done.stderr[-3000:]}")
            gates.append(elapsed)
            gate = json.loads(next(Path(tmp).glob("*/gate.json")).read_text())
            calls = gate["counts"]["calls_compared"]
            for run in gate["runs"]:
                elapsed, done = harness("audit", run["run_dir"])
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


def render(figures: Figures) -> str:
    gates: list[float] = figures["gate_s"]  # type: ignore[assignment]
    audits: list[float] = figures["audit_s"]  # type: ignore[assignment]
    verdict = "met" if max(gates) < TARGET_S and max(audits) < TARGET_S else "NOT met"
    return walltime.measured(SECTION, "bench.gate_audit_bench", figures) + (
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


def main() -> None:
    walltime.main(__doc__ or "", SECTION, 2, measure, render)


if __name__ == "__main__":
    main()
