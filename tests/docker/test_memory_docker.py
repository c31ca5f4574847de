"""A memory benchmark on the docker backend: the retrieval arm's state folder is a folder of its
bind-mounted log directory; the arm is stopped with `docker stop` for its snapshot and started
afresh on the copy for each question, with no stray (a keep-alive connection closed after the
container was replaced would be answered with a reset the rules log as the arm reaching out)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rundir.ingestions import IngestionRecord, SnapshotRecord, read_ingestions
from rundir.questions import read_questions
from tests.datasets.fixtures import locomo_file
from tests.harness.studies import harness, header, only_run
from tests.study_builder import StudyBuilder

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
    assert (run / shot.path / "c_conv-26.json").is_file()
    questions = read_questions(run / "questions.jsonl")
    assert [q.snapshot_sha256 for q in questions] == [shot.sha256, shot.sha256]
    assert all(q.evidence_reached for q in questions)
