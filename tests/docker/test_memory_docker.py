"""A memory benchmark on the docker backend: the retrieval arm's state folder is a folder of its
bind-mounted log directory; the arm is stopped with `docker stop` for its snapshot and started
afresh on the copy for each question, with no stray (a keep-alive connection closed after the
container was replaced would be answered with a reset the rules log as the arm reaching out)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rundir.turns.ingestions import IngestionRecord, SnapshotRecord, read_ingestions
from rundir.turns.questions import read_questions
from tests.datasets.fixtures import locomo_file
from tests.helpers.studies import harness, header, only_run
from tests.study_builder import StudyBuilder
from tests.toy_arms import TOY_ARMS

pytestmark = pytest.mark.integration


@pytest.mark.usefixtures("images")
def test_a_locomo_conversation_in_containers_is_snapshotted_once(tmp_path: Path) -> None:
    arms = {"retrieval": {"command": "python -m arms.retrieval", "env": {}}}
    items = {"format": "locomo", "path": "locomo10.json", "n": 2, "seed": 1}
    study = StudyBuilder(arms=arms).set(items=items).write(tmp_path / "study")
    locomo_file(tmp_path / "study", samples=1, questions=4)
    runs = tmp_path / "runs"
    done = harness("record", str(study), "--run-dir", str(runs), "--isolation", "docker")
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    run = only_run(runs)
    assert header(run)["study"]["stray_connections"] == 0
    lines = read_ingestions(run / "turns.jsonl")
    assert len([r for r in lines if isinstance(r, IngestionRecord)]) == 3
    (shot,) = [r for r in lines if isinstance(r, SnapshotRecord)]
    # The retrieval arm's store: one JSON line per memory, in a file per session id.
    assert (run / shot.path / "c_conv-26.jsonl").is_file()
    questions = read_questions(run / "questions.jsonl")
    assert [q.snapshot_sha256 for q in questions] == [shot.sha256, shot.sha256]
    assert all(q.evidence_reached for q in questions)


@pytest.fixture(scope="module")
def engine_images(docker_engine: object) -> None:
    from harness.images.build import BuildOptions, build_images

    build_images(BuildOptions(offline=True, extras=("engines",)), lambda line: None)


def test_mem0_and_graphiti_ingest_and_answer_from_their_copies(
    engine_images: None, tmp_path: Path
) -> None:
    """The real engines, in their images: each ingests the conversation at its sessions' dates,
    is snapshotted once, and answers each question from a fresh copy (Graphiti reopens its Kuzu
    graph, indexes and all)."""
    import shutil

    import tomli_w

    folder = tmp_path / "study"
    folder.mkdir()
    shutil.copy(Path(__file__).resolve().parents[2] / "examples/engines/compose.yaml", folder)
    locomo_file(folder, samples=1, questions=3)
    study = {
        "name": "engines-memory",
        "arms": ["mem0", "graphiti"],
        "items": {"format": "locomo", "path": "locomo10.json", "n": 2, "seed": 1},
        "mask": ["messages.*.content~date"],
    }
    (folder / "study.toml").write_text(tomli_w.dumps(study))
    runs = tmp_path / "runs"
    done = harness(
        "record", str(folder / "study.toml"), "--run-dir", str(runs), "--isolation", "docker"
    )
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    run = only_run(runs)
    lines = read_ingestions(run / "turns.jsonl")
    for arm in ("mem0", "graphiti"):
        ingested = [r for r in lines if isinstance(r, IngestionRecord) and r.arm == arm]
        assert [r.outcome for r in ingested] == ["done"] * 3 and all(r.stored for r in ingested)
        assert len([r for r in lines if isinstance(r, SnapshotRecord) and r.arm == arm]) == 1
    questions = read_questions(run / "questions.jsonl")
    assert sorted((q.arm, q.ingest_sessions) for q in questions) == [
        ("graphiti", 0), ("graphiti", 3), ("mem0", 0), ("mem0", 3)
    ]  # fmt: skip
    assert all(q.outcome == "done" and q.ingest_calls >= 0 for q in questions)


@pytest.mark.usefixtures("images")
def test_a_bound_met_while_ingesting_is_the_arms_resource_limit(tmp_path: Path) -> None:
    """The toy arm balloons while ingesting q000's answer session: that ingestion is recorded
    `resource_limit` naming the memory bound, the rest of q000's history is not ingested, no
    snapshot is taken of it, q000's question is not asked (resource_limit, not a retry), and the
    replaced arm ingests and answers the other questions."""
    import shutil
    import sys

    from tests.datasets.fixtures import longmemeval_file
    from tests.helpers.studies import read_jsonl

    del sys  # the arm runs in the image's Python
    arm_file = TOY_ARMS / "memory_arm.py"
    (tmp_path / "study").mkdir()
    shutil.copy(arm_file, tmp_path / "study" / "memory_arm.py")  # containers see the study only
    arms = {
        "toy": {"command": "python memory_arm.py", "env": {"MEMORY_ARM_BALLOON_SESSION": "s0_b"}}
    }
    items = {"format": "longmemeval", "path": "longmemeval_s.json"}
    builder = StudyBuilder(arms=arms).set(items=items)
    study = builder.set(limits={"memory": "192m", "pids": 64}).write(tmp_path / "study")
    longmemeval_file(tmp_path / "study", per_type=1)
    runs = tmp_path / "runs"
    harness("record", str(study), "--run-dir", str(runs), "--isolation", "docker")
    run = only_run(runs)
    lines = read_ingestions(run / "turns.jsonl")
    first = [r for r in lines if isinstance(r, IngestionRecord) and r.item == "q000"]
    assert [(r.session, r.outcome) for r in first] == [("s0_a", "done"), ("s0_b", "resource_limit")]
    assert first[1].error and "memory limit" in first[1].error and "'toy'" in first[1].error
    assert "q000" not in {r.item for r in lines if isinstance(r, SnapshotRecord)}
    answers = {t["item"]: t for t in read_jsonl(run / "turns.jsonl") if "turn" in t}
    assert answers["q000"]["outcome"] == "resource_limit" and answers["q000"]["attempts"] == 1
    assert answers["q001_abs"]["outcome"] == "done" and answers["q002"]["outcome"] == "done"
