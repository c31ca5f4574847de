"""A coupled memory benchmark run for real in record mode (local backend; harness/run/
coupled_item.py and coupled_memory.py): every arm takes in the question's history before the
question runs coupled, with the reference leading, its context handed, C1 answered by reuse of
C0, the same requests and answers with one worker or two; and the hostile paths: an arm whose
ingestion crashes every time, a snapshot that cannot be copied, a resumed run."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from rundir.turns.ingestions import IngestionRecord, SnapshotRecord, read_ingestions
from rundir.turns.questions import read_questions
from rundir.turns.turns import read_turns
from tests.datasets.fixtures import longmemeval_file
from tests.helpers.studies import harness, read_jsonl
from tests.study_builder import StudyBuilder
from tests.toy_arms import TOY_ARMS

pytestmark = pytest.mark.integration
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "coupled-memory"
MEMORY_ARM = TOY_ARMS / "memory_arm.py"


def _record(study: Path, runs: Path, *args: str, passes: bool = True) -> Path:
    """The newest run `harness record` left in `runs` (one with infrastructure failures does
    not pass: `passes=False`)."""
    done = harness("record", str(study), "--run-dir", str(runs), "--isolation", "local", *args)
    output = done.stdout + done.stderr[-3000:]
    assert (done.returncode == 0) == passes, output
    assert "infrastructure failures" in done.stdout, output  # it ran to its summary
    return max((p for p in runs.iterdir() if (p / "run.json").exists()), key=lambda p: p.name)


def _requests(run: Path) -> list[tuple[Any, ...]]:
    """Every call as what was asked (not when, nor by which worker's copy)."""
    calls = read_jsonl(run / "calls.jsonl")
    return sorted(
        (c["arm"], c["item"], c["turn"], c.get("phase", ""), c["purpose"], c["request_hash"])
        for c in calls
    )


def test_the_example_couples_its_memory_arms_alike_with_one_worker_or_two(
    tmp_path: Path,
) -> None:
    study = tmp_path / "study" / "study.toml"
    shutil.copytree(EXAMPLE, study.parent)
    study.write_text(study.read_text().replace("../../ledger.jsonl", "ledger.jsonl"))
    one = _record(study, tmp_path / "one", "--workers", "1")
    two = _record(study, tmp_path / "two", "--workers", "2")
    assert _requests(one) == _requests(two)
    for run in (one, two):
        turns = read_turns(run / "turns.jsonl")
        assert len(turns) == 12 and {t.outcome for t in turns} == {"done"}
        assert all(t.order == ["B", "C0", "C1"] for t in turns)
        assert {t.arm: t.addon_from for t in turns} == {"B": None, "C0": "B", "C1": "B"}
        lines = read_ingestions(run / "turns.jsonl")
        ingested = [r for r in lines if isinstance(r, IngestionRecord)]
        assert len(ingested) == 4 * 3 * 3 and {r.outcome for r in ingested} == {"done"}
        shots = [r for r in lines if isinstance(r, SnapshotRecord)]
        assert sorted((s.arm, s.item) for s in shots) == sorted(
            (arm, f"cm{n:02d}") for arm in ("C0", "C1") for n in range(4)
        )
        # The retrieval arms read their own copies, the evidence session's text reached both.
        questions = read_questions(run / "questions.jsonl")
        assert len(questions) == 12
        assert all(q.evidence_reached for q in questions if q.arm != "B")
        mains = [c for c in read_jsonl(run / "calls.jsonl") if c["purpose"] == "main"]
        seq = {(c["item"], c["arm"]): c["seq"] for c in mains}
        reused = {c["item"]: c.get("reuse_of") for c in mains if c["arm"] == "C1"}
        assert reused == {item: seq[(item, "C0")] for item in reused} and len(reused) == 4
        audit = harness("audit", str(run))
        assert audit.returncode == 0, audit.stdout + audit.stderr[-2000:]  # top-k included
    texts = {
        run: sorted((t.item, t.arm, t.text) for t in read_turns(run / "turns.jsonl"))
        for run in (one, two)
    }
    assert texts[one] == texts[two]


def _hostile_study(folder: Path, **c0_env: str) -> Path:
    folder.mkdir(parents=True)
    longmemeval_file(folder, per_type=1)  # q000, q001_abs, q002: three sessions each
    memory = {"command": f"{sys.executable} {MEMORY_ARM}"}
    arms = {
        "B": {
            "command": f"{sys.executable} -m arms.toy",
            "env": {"ARM_ROLE": "B", "ARM_MODEL": "gpt-4.1-mini"},
        },
        "C0": {**memory, "env": c0_env},
        "C1": {**memory, "env": {}},
    }
    coupling = {"order": ["B", "C0", "C1"], "addon_from": "B", "reuse": [["C0", "C1"]]}
    builder = StudyBuilder(arms=arms).set(coupling=coupling)
    return builder.set(items={"format": "longmemeval", "path": "longmemeval_s.json"}).write(folder)


def test_an_arm_whose_ingestion_crashes_fails_alone_and_resume_runs_its_items_again(
    tmp_path: Path,
) -> None:
    """C0 dies in every ingestion: after its retries its questions are infra_failed, B and C1
    answer theirs (C1 on its own: no reply of C0's to reuse). Resumed once the crash is gone,
    every item runs again in every arm, C1 from the snapshots the first run took."""
    die = tmp_path / "die"
    die.touch()
    study = _hostile_study(tmp_path / "study", MEMORY_ARM_DIE_FILE=str(die))
    runs = tmp_path / "runs"
    first = _record(study, runs, passes=False)
    turns = read_turns(first / "turns.jsonl")
    assert len(turns) == 9
    assert {(t.arm, t.outcome, t.attempts) for t in turns} == {
        ("B", "done", 1),
        ("C0", "infra_failed", 4),
        ("C1", "done", 1),
    }
    assert all(t.text.startswith("s") for t in turns if t.arm == "C1")  # its history's log
    lines = read_ingestions(first / "turns.jsonl")
    assert not [r for r in lines if isinstance(r, SnapshotRecord) and r.arm == "C0"]
    snapshots = {r.item: r.sha256 for r in lines if isinstance(r, SnapshotRecord)}
    assert sorted(snapshots) == ["q000", "q001_abs", "q002"]  # C1's
    questions = read_questions(first / "questions.jsonl")
    assert {(q.arm, q.outcome) for q in questions} == {
        ("B", "done"),
        ("C0", "infra_failed"),
        ("C1", "done"),
    }

    die.unlink()
    second = _record(study, runs, "--resume", str(first))
    again = read_ingestions(second / "turns.jsonl")
    ingested = {(r.arm, r.item) for r in again if isinstance(r, IngestionRecord)}
    assert {arm for arm, _ in ingested} == {"B", "C0"}  # C1 restored its snapshots instead
    shots = [r for r in again if isinstance(r, SnapshotRecord)]
    assert {r.arm for r in shots} == {"C0"}
    turns = read_turns(second / "turns.jsonl")
    assert len(turns) == 9 and {t.outcome for t in turns} == {"done"}
    c1_questions = [q for q in read_questions(second / "questions.jsonl") if q.arm == "C1"]
    assert {q.item: q.snapshot_sha256 for q in c1_questions} == snapshots


def test_a_snapshot_that_cannot_be_copied_fails_the_item_in_every_arm_before_its_question(
    tmp_path: Path,
) -> None:
    """C0's store of q000's history holds a fifo: no arm's question of q000 is asked (B made
    no call for it), every arm's turn is infra_failed naming C0's snapshot; the others run."""
    study = _hostile_study(tmp_path / "study", MEMORY_ARM_FIFO_SESSION="s0_b")
    run = _record(study, tmp_path / "runs", passes=False)
    turns = read_turns(run / "turns.jsonl")
    failed = [t for t in turns if t.item == "q000"]
    assert sorted(t.arm for t in failed) == ["B", "C0", "C1"]
    assert {t.outcome for t in failed} == {"infra_failed"}
    assert all("the item's snapshot failed on C0" in (t.error or "") for t in failed)
    assert {t.outcome for t in turns if t.item != "q000"} == {"done"}
    calls = read_jsonl(run / "calls.jsonl")
    assert [c for c in calls if c["item"] == "q000" and c["purpose"] == "main"] == []
    questions = {(q.item, q.arm): q.outcome for q in read_questions(run / "questions.jsonl")}
    assert {q for (item, _), q in questions.items() if item == "q000"} == {"infra_failed"}
    assert json.loads((run / "run.json").read_text())["study"]["outcomes"] == {
        "done": 6,
        "infra_failed": 3,
    }
