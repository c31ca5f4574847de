"""Wall time of `harness report` on a synthetic run of 10,000 calls (issue 10: under 10 s).

    .venv/bin/python -m bench.report_bench [--rounds 3] [--write BENCHMARKS.md]

The run is written with the harness's own record types (tests/helpers/report_runs.py): 4 arms,
250 items of 2 turns, 5 calls per turn (half of them non-streamed, with their response bodies in
bodies/pack.bin so the report reads their sizes from the pack), some turns cut at the deadline,
one item failed for infrastructure reasons, and a judgments file for every turn. Each round
times the whole `harness report` process (start-up included, 10,000 bootstrap resamples) writing
markdown and HTML, and, when Chromium is installed, the PDF too.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import tempfile
from pathlib import Path

from bench import walltime
from bench.walltime import Figures, harness, measured
from harness.report.formats.chromium import find_chromium
from rundir.calls.bodies import BodyStore
from rundir.calls.calllog import CallRecord
from rundir.turns.turns import TurnOutcome, TurnRecord
from tests.helpers.report_runs import call, turn, write_run

SECTION = "Report generation on 10,000 calls"
TARGET_S = 10.0
ARMS = ("bare", "retrieval", "graph", "scrambled")
TURNS_PER_ITEM, CALLS_PER_TURN = 2, 5
CALLS = 10_000


def synthetic_run(root: Path, calls_wanted: int) -> tuple[Path, Path]:
    run = "bench-report"
    items = max(1, calls_wanted // (len(ARMS) * TURNS_PER_ITEM * CALLS_PER_TURN))
    turns: list[TurnRecord] = []
    calls: list[CallRecord] = []
    judged: list[dict[str, object]] = []
    for a, arm in enumerate(ARMS):
        for i in range(items):
            item = f"item-{i:05d}"
            for t in range(TURNS_PER_ITEM):
                outcome: TurnOutcome = "cut" if (i + t + a) % 97 == 0 else "done"
                if (arm, i) == ("graph", 7):
                    outcome = "infra_failed"
                last = 0.3 + ((i * 7 + t * 3 + a) % 50) / 10
                turns.append(turn(run, arm, item, t, outcome=outcome, last=last))
                judged.append({"item": item, "arm": arm, "turn": t, "family": f"f{i % 3}",
                               "correct": (i * (a + 1) + t) % 4 != 0})  # fmt: skip
                for c in range(CALLS_PER_TURN):
                    purpose = "main" if c == 0 else "embedding"
                    calls.append(
                        call(run, len(calls) + 1, arm, item, t, cost=f"0.000{(i + c) % 9 + 1}",
                             purpose=purpose, chunks=[200 + c, 80] if c % 2 == 0 else None)
                    )  # fmt: skip
    run_dir = write_run(root, run, list(ARMS), turns, [], deadline_ms=6000)
    _with_bodies(run_dir, calls)
    judgments = root / "judgments.jsonl"
    judgments.write_text("".join(json.dumps(row) + "\n" for row in judged))
    return run_dir, judgments


def _with_bodies(run_dir: Path, calls: list[CallRecord]) -> None:
    # Non-streamed calls' response sizes come from the body pack, as in a real run.
    store = BodyStore(run_dir / "bodies")
    with open(run_dir / "calls.jsonl", "w") as f:
        for record in calls:
            if record.response_chunks is None:
                body = json.dumps({"seq": record.seq, "pad": "x" * (record.seq % 400)}).encode()
                record.response_hash = store.put(body)
            f.write(record.to_line())
    store.close()


def measure(rounds: int, calls_wanted: int) -> Figures:
    load_before = os.getloadavg()[0]
    formats = "md,html,pdf" if find_chromium() else "md,html"
    with tempfile.TemporaryDirectory(prefix="report-bench-") as tmp:
        run_dir, judgments = synthetic_run(Path(tmp), calls_wanted)
        calls = len((run_dir / "calls.jsonl").read_text().splitlines())
        times, cpu = [], []
        for n in range(rounds):
            out = Path(tmp) / f"out-{n}"
            # CPU time (the report's process and its Chromium) is steadier than wall time on a
            # machine other work shares.
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            elapsed, done = harness(
                "report", str(run_dir), "--out", str(out), "--format", formats,
                "--judgments", str(judgments),
            )  # fmt: skip
            if done.returncode != 0:
                raise SystemExit(f"harness report failed:\n{done.stderr[-3000:]}")
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            times.append(elapsed)
            cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        sizes = {p.name: p.stat().st_size for p in sorted(out.iterdir())}
    return {
        "calls": calls,
        "formats": formats,
        "times": times,
        "cpu": cpu,
        "sizes": sizes,
        "load_before": load_before,
        "load_after": os.getloadavg()[0],
    }


def render(figures: Figures) -> str:
    times: list[float] = figures["times"]  # type: ignore[assignment]
    cpu: list[float] = figures["cpu"]  # type: ignore[assignment]
    sizes: dict[str, int] = figures["sizes"]  # type: ignore[assignment]
    verdict = "met" if max(times) < TARGET_S else "NOT met"
    files = ", ".join(f"{name} {size / 1024:.0f} KiB" for name, size in sizes.items())
    return measured(SECTION, "bench.report_bench", figures) + (
        f"A synthetic run of {figures['calls']} calls (4 arms, 250 items of 2 turns, 5 calls per "
        "turn, half the response sizes read from the body pack, cut turns, one item dropped for "
        "infrastructure, every turn judged) and `harness report RUN_DIR --judgments FILE "
        f"--format {figures['formats']}` with 10,000 bootstrap resamples; each figure is the "
        "whole command's wall time, Python start-up included.\n\n"
        "| round | wall s | CPU s |\n|---|---:|---:|\n"
        + "".join(
            f"| {n} | {t:.1f} | {c:.1f} |\n"
            for n, (t, c) in enumerate(zip(times, cpu, strict=True), 1)
        )
        + f"\nMedian {statistics.median(times):.1f} s. Files written: {files}.\n\n"
        f"Target: under {TARGET_S:.0f} s on 2 cores: {verdict} in wall time; the report's own "
        f"CPU time (median {statistics.median(cpu):.1f} s, Chromium included) is what it would "
        "take on 2 idle cores, the rest of the wall time is waiting for the machine's other work.\n"
    )


def main() -> None:
    walltime.main(__doc__ or "", SECTION, 3, lambda rounds: measure(rounds, CALLS), render)


if __name__ == "__main__":
    main()
