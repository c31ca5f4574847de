"""Two runs of one study with different `--workers` compared record by record: what a worker
count must not change (the turn and question records less their timings, every call's request
hash), for the local backend's tests (tests/run/stages/test_workers_runs.py) and the docker one's
(tests/docker/test_workers_docker.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.helpers.studies import harness, only_run, read_jsonl

TIMING = ("run", "seconds", "ingest_seconds", "first_token_s", "last_token_s")


def record_with_workers(study: Path, runs: Path, isolation: str, workers: int) -> Path:
    """`harness record STUDY` with `workers` workers into `runs`; the run it made (it passed)."""
    done = harness("record", str(study), "--run-dir", str(runs), "--isolation", isolation,
                   "--workers", str(workers))  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    return only_run(runs)


def untimed(path: Path) -> list[dict[str, Any]]:
    """A run file's records without the fields that measure time (or name the run)."""
    return [{k: v for k, v in r.items() if k not in TIMING} for r in read_jsonl(path)]


def request_hashes(run: Path) -> list[tuple[Any, ...]]:
    calls = read_jsonl(run / "calls.jsonl")
    keyed = [(c["arm"], c["item"], c.get("phase"), c["turn"], c["request_hash"]) for c in calls]
    return sorted(keyed, key=str)


def assert_same_records(run: Path, baseline: Path) -> None:
    """`run` took in, answered and asked exactly what `baseline` did."""
    assert untimed(run / "turns.jsonl") == untimed(baseline / "turns.jsonl")
    assert untimed(run / "questions.jsonl") == untimed(baseline / "questions.jsonl")
    assert request_hashes(run) == request_hashes(baseline) and request_hashes(baseline)
