"""`--workers 2` on the docker backend: each worker's copy of the arm in its own container on its
own internal network (`<run>-retrieval-w1`), one proxy with a listener per copy, and results that
do not depend on N: a LoCoMo study of two conversations, recorded with one and with two workers,
gives the same ingestions, snapshots, answers and request hashes, and the gate finds nothing
between the runs. run.json names the study's arm only (arm_limits, images), never a copy."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.checks.gate import compare_runs
from harness.checks.masks import all_masks
from harness.study import load_study
from rundir.runs.gate_record import GateCounts
from tests.datasets.fixtures import locomo_file
from tests.helpers.studies import header, read_jsonl
from tests.helpers.worker_runs import assert_same_records, record_with_workers
from tests.study_builder import StudyBuilder

pytestmark = pytest.mark.integration


@pytest.mark.usefixtures("images")
def test_two_docker_workers_give_the_records_of_one(tmp_path: Path) -> None:
    arms = {"retrieval": {"command": "python -m arms.retrieval", "env": {}}}
    items = {"format": "locomo", "path": "locomo10.json"}
    study = StudyBuilder(arms=arms).set(items=items).write(tmp_path / "study")
    locomo_file(tmp_path / "study", samples=2, questions=4)
    one, two = (record_with_workers(study, tmp_path / f"runs{n}", "docker", n) for n in (1, 2))
    assert_same_records(two, one)
    snapshots = [r for r in read_jsonl(two / "turns.jsonl") if r.get("kind") == "snapshot"]
    assert len(snapshots) == 2  # one per conversation, each on its own worker's copy
    assert (two / "logs" / "retrieval@1" / "state").is_dir()
    counts = GateCounts()
    assert compare_runs(two, one, all_masks(load_study(study)), counts) == []
    assert counts.calls_compared == len(read_jsonl(one / "calls.jsonl"))
    run = header(two)["study"]
    assert run["passed"] and run["stray_connections"] == 0 and run["egress_dropped"] == {}
    assert set(run["arm_limits"]) == {"retrieval"}
    assert set(header(two)["manifest"]["images"]) <= {"proxy", "retrieval"}
