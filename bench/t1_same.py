"""What `--workers N` must not change in a T1 run (issue 37's "must show"): the same requests,
the same snapshots and the same answers as with one worker. bench/t1_bench.py's
`--compare-workers A B` records one study with A and with B workers (`compare_workers`) and
reads the two runs here.

- requests: the determinism gate's own comparison (harness/checks/gate.py, the study's masks),
  per item, arm and turn;
- snapshots: each (arm, history)'s store hash, from the snapshot lines of turns.jsonl;
- answers: each (item, arm)'s answer text and its evidence found, from questions.jsonl.
Read from the files as JSON lines, not the run-directory models: the bench may read a run made
by another checkout (`--src`).
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Sameness:
    requests: int  # calls compared by the gate
    requests_differing: int
    snapshots: int
    snapshots_differing: int
    answers: int
    answers_differing: int

    @property
    def same(self) -> bool:
        return not (self.requests_differing or self.snapshots_differing or self.answers_differing)

    def line(self, a: int, b: int) -> str:
        return (
            f"workers {a} vs {b}: {self.requests} requests, {self.requests_differing} differ; "
            f"{self.snapshots} snapshots, {self.snapshots_differing} differ; "
            f"{self.answers} answers, {self.answers_differing} differ"
        )


def _lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _differing(a: dict[Any, Any], b: dict[Any, Any]) -> int:
    return sum(a.get(key) != b.get(key) for key in a.keys() | b.keys())


def compare(first: Path, second: Path, study: Path) -> Sameness:
    from harness.checks.gate import compare_runs
    from harness.checks.masks import all_masks
    from harness.study import load_study
    from rundir.runs.gate_record import GateCounts

    counts = GateCounts()
    divergences = compare_runs(first, second, all_masks(load_study(study)), counts)
    shots = [
        {
            (r["arm"], r["history"]): r["sha256"]
            for r in _lines(run / "turns.jsonl")
            if r.get("kind") == "snapshot"
        }
        for run in (first, second)
    ]
    answers = [
        {
            (q["item"], q["arm"]): (q["answer"], q.get("evidence_found"))
            for q in _lines(run / "questions.jsonl")
        }
        for run in (first, second)
    ]
    return Sameness(
        requests=counts.calls_compared,
        requests_differing=len(divergences),
        snapshots=len(shots[0].keys() | shots[1].keys()),
        snapshots_differing=_differing(*shots),
        answers=len(answers[0].keys() | answers[1].keys()),
        answers_differing=_differing(*answers),
    )


def compare_workers(
    data: Path,
    items: int,
    seed: int,
    workers: tuple[int, int],
    variant: str,
    source: tuple[str, Path],
) -> tuple[list[str], Sameness]:
    """One study recorded with each of `workers` by the checkout `source` (name, folder): the
    bench's rows and what differs between the two runs."""
    from bench.t1_bench import record, row, write_study

    name, src = source
    with tempfile.TemporaryDirectory(prefix="t1-same-") as tmp:
        study = write_study(Path(tmp) / "study", data, items, seed, src)
        rows, runs = [], []
        for count in workers:
            result = record(study, Path(tmp) / f"runs-{count}", count, variant, src)
            rows.append(row(f"{name}, {variant}", result, count))
            print(rows[-1], flush=True)
            runs.append(result["run"])
        return rows, compare(runs[0], runs[1], study)
