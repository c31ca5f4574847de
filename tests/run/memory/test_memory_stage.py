"""A memory benchmark study run for real in record mode (local backend): each history session
ingested at its own date, a snapshot per arm and history, a fresh copy per question, LoCoMo's
conversation ingested once for all its questions, ingestion kept apart from answers."""

from __future__ import annotations

import json
import signal
import sys
import time
from pathlib import Path

import pytest

from rundir.turns.ingestions import IngestionRecord, SnapshotRecord, read_ingestions
from rundir.turns.questions import read_questions
from rundir.turns.turns import read_turns
from tests.datasets.fixtures import locomo_file, longmemeval_file
from tests.helpers.studies import harness, header, only_run, read_jsonl, spawn_harness
from tests.study_builder import StudyBuilder
from tests.toy_arms import TOY_ARMS

pytestmark = pytest.mark.integration
ARM = TOY_ARMS / "memory_arm.py"


def _arm(**env: str) -> dict[str, object]:
    return {"command": f"{sys.executable} {ARM}", "env": env}


def _study(folder: Path, arms: dict[str, dict[str, object]], **items: object) -> Path:
    return StudyBuilder(arms=arms).set(items=items).write(folder)  # type: ignore[arg-type]


def _record(study: Path, runs: Path) -> Path:
    done = harness("record", str(study), "--run-dir", str(runs), "--isolation", "local")
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    return only_run(runs)


def test_longmemeval_questions_each_on_a_fresh_copy_of_their_ingested_store(
    tmp_path: Path,
) -> None:
    longmemeval_file(tmp_path, per_type=1)
    study = _study(
        tmp_path,
        {"toy": _arm(MEMORY_ARM_LAG="1")},  # the lag is checked below
        format="longmemeval",
        path="longmemeval_s.json",
        net_lambda=1.5,
    )
    run = _record(study, tmp_path / "runs")
    lines = read_ingestions(run / "turns.jsonl")
    ingested = [r for r in lines if isinstance(r, IngestionRecord)]
    snapshots = [r for r in lines if isinstance(r, SnapshotRecord)]
    assert len(ingested) == 9 and len(snapshots) == 3  # 3 questions x 3 sessions; one each
    assert all(r.outcome == "done" and r.stored == 1 for r in ingested)
    first = [r for r in ingested if r.item == "q000"]
    assert [(r.session, r.index, f"{r.date:%Y-%m-%d}") for r in first] == [
        ("s0_a", 0, "2023-05-20"),
        ("s0_b", 1, "2023-05-21"),
        ("answer_0_1", 2, "2023-05-25"),
    ]
    turns = read_turns(run / "turns.jsonl")  # the answers only
    assert [t.item for t in turns] == ["q000", "q001_abs", "q002"]
    answer = turns[0].text
    assert "s0_a 2023-05-20" in answer and "answer_0_1 2023-05-25" in answer
    if header(run)["study"]["clock_pinning"] == "libfaketime":
        # The arm's own clock read each session's date while it ingested it.
        assert "s0_a 2023-05-20 now=2023-05-20" in answer
        assert "answer_0_1 2023-05-25 now=2023-05-25" in answer
        # Exactly: from the session's date on (never before it), at once (no second's wait).
        lags = [float(w[4:]) for w in answer.split() if w.startswith("lag=")]
        assert len(lags) == 3 and all(0 <= lag < 60 for lag in lags), lags
    assert all(t.text.endswith("asked: ") for t in turns)  # nobody asked before: fresh copies
    for shot in snapshots:
        assert (run / shot.path).is_dir() and len(shot.sha256) == 64
    assert header(run)["study"]["outcomes"] == {"done": 3}
    questions = {q.item: q for q in read_questions(run / "questions.jsonl")}
    assert sorted(questions) == ["q000", "q001_abs", "q002"]
    # When each question was asked, and its history's span, as the arm's clock had them.
    asked = questions["q000"]
    assert f"{asked.question_date:%Y-%m-%d %H:%M}" == "2023-05-30 23:40"
    assert (f"{asked.history_from:%Y-%m-%d}", f"{asked.history_to:%Y-%m-%d}") == (
        "2023-05-20",
        "2023-05-25",
    )
    abstaining = questions["q001_abs"]
    assert abstaining.abstention and abstaining.exact_match is None
    assert abstaining.evidence_reached is None  # nothing to reach: the history lacks the answer
    # NET(1.5): the toy answers with its log, never a refusal: the abstention question and the
    # answerable ones it gets wrong cost lambda each.
    assert not abstaining.abstained and abstaining.net == -1.5
    assert questions["q000"].net == -1.5 and questions["q000"].net_lambda == 1.5
    # The toy makes no model call: the evidence never reached a main call.
    assert questions["q000"].evidence_reached is False and questions["q000"].exact_match is False
    assert questions["q000"].ingest_sessions == 3 and questions["q000"].ingest_seconds > 0


def test_a_locomo_conversation_is_ingested_once_for_all_its_questions(tmp_path: Path) -> None:
    locomo_file(tmp_path, samples=1, questions=4)
    study = _study(tmp_path, {"toy": _arm()}, format="locomo", path="locomo10.json")
    run = _record(study, tmp_path / "runs")
    lines = read_ingestions(run / "turns.jsonl")
    assert len([r for r in lines if isinstance(r, IngestionRecord)]) == 3  # three sessions, once
    assert len([r for r in lines if isinstance(r, SnapshotRecord)]) == 1
    turns = read_turns(run / "turns.jsonl")
    assert len(turns) == 4
    questions = read_questions(run / "questions.jsonl")
    assert [q.ingest_sessions for q in questions] == [3, 0, 0, 0]  # the first paid for all
    assert len({q.snapshot_sha256 for q in questions}) == 1
    assert [q.category for q in questions] == [1, 2, 4, 2]
    out = tmp_path / "report"
    done = harness("report", str(run), "--out", str(out))
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    rows = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    asked = [r for r in rows if r["kind"] == "question"]
    assert sorted(r["category"] for r in asked) == [1, 2, 2, 4]
    assert all(r["gold"] and "ingest_cost_usd" in r for r in asked)
    assert all(r["net"] == -1.0 and r["net_lambda"] == 1.0 for r in asked)  # the default
    # The report's families section counts the questions by category.
    markdown = (out / "report.md").read_text()
    assert "| category 2 | 2 |" in markdown and "| category 4 | 1 |" in markdown
    # Each question on its own copy: none sees another's question in the store.
    assert all(t.text.endswith("asked: ") for t in turns), [t.text for t in turns]


def test_an_arm_without_a_state_folder_ingests_into_each_questions_session(
    tmp_path: Path,
) -> None:
    locomo_file(tmp_path, samples=1, questions=2)
    arms = {"toy": _arm(MEMORY_ARM_STATELESS="1")}
    study = _study(tmp_path, arms, format="locomo", path="locomo10.json")
    run = _record(study, tmp_path / "runs")
    lines = read_ingestions(run / "turns.jsonl")
    assert len([r for r in lines if isinstance(r, IngestionRecord)]) == 6  # again per question
    assert not [r for r in lines if isinstance(r, SnapshotRecord)]
    assert all("session_3" in t.text for t in read_turns(run / "turns.jsonl"))


def test_ingestion_calls_are_charged_to_the_item_as_ingestion(tmp_path: Path) -> None:
    """The retrieval arm embeds each history session through the proxy: those calls carry the
    item, the session's index and phase ingest; the question's main call carries the evidence."""
    longmemeval_file(tmp_path, per_type=1)
    retrieval = {"command": f"{sys.executable} -m arms.retrieval", "env": {}}
    study = _study(
        tmp_path, {"retrieval": retrieval}, format="longmemeval", path="longmemeval_s.json", n=1
    )
    run = _record(study, tmp_path / "runs")
    calls = read_jsonl(run / "calls.jsonl")
    ingest = [c for c in calls if c.get("phase") == "ingest"]
    assert [(c["turn"], c["purpose"], c["route"]) for c in ingest] == [
        (0, "embedding", "openai.embeddings"),
        (1, "embedding", "openai.embeddings"),
        (2, "embedding", "openai.embeddings"),
    ]
    (item,) = {c["item"] for c in calls}
    main = [c for c in calls if c["purpose"] == "main"]
    assert len(main) == 1 and "phase" not in main[0]
    from rundir.calls.packread import PackReader

    body = json.loads(PackReader.open(run).get(main[0]["request_body"]))
    memory = json.loads((tmp_path / "longmemeval_s.json").read_text())
    (entry,) = [e for e in memory if e["question_id"] == item]
    needle = entry["haystack_sessions"][2][0]["content"]
    assert needle in body["messages"][0]["content"]
    (question,) = read_questions(run / "questions.jsonl")
    assert (question.item, question.arm, question.question_type) == (
        item,
        "retrieval",
        entry["question_type"],
    )
    assert (question.gold, question.abstention) == (str(entry["answer"]), item.endswith("_abs"))
    assert (question.evidence_total, question.evidence_found, question.evidence_reached) == (
        1,
        1,
        True,
    )
    assert (question.ingest_sessions, question.ingest_calls, question.ingest_failed) == (3, 3, 0)
    assert (
        question.answer_calls == len(calls) - 3
        and question.answer == read_turns(run / "turns.jsonl")[0].text
    )
    assert question.snapshot_sha256 is not None and len(question.snapshot_sha256) == 64
    # Replayed offline: the ingestion's embedding calls and the answer are served again.
    runs = tmp_path / "runs"
    replay = harness("replay", str(run), "--run-dir", str(runs), "--isolation", "local")
    assert replay.returncode == 0, replay.stdout + replay.stderr[-3000:]
    (replayed,) = [p for p in runs.iterdir() if p != run and (p / "run.json").exists()]
    again = read_jsonl(replayed / "calls.jsonl")
    assert sorted(c["request_hash"] for c in again) == sorted(c["request_hash"] for c in calls)


def test_a_resumed_run_starts_from_the_snapshot_the_stopped_run_took(tmp_path: Path) -> None:
    locomo_file(tmp_path, samples=1, questions=3)
    study = _study(tmp_path, {"toy": _arm()}, format="locomo", path="locomo10.json")
    runs = tmp_path / "runs"
    done = harness(
        "record", str(study), "--run-dir", str(runs), "--isolation", "local", "--limit", "1"
    )
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    first = only_run(runs)
    resumed = harness(
        "record", str(study), "--run-dir", str(runs), "--isolation", "local",
        "--resume", str(first),
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr[-3000:]
    (second,) = [p for p in runs.iterdir() if p != first and (p / "run.json").exists()]
    lines = read_ingestions(second / "turns.jsonl")
    assert lines == []  # nothing ingested again: the conversation's snapshot was reused
    turns = read_turns(second / "turns.jsonl")
    assert [t.item for t in turns] == ["c.conv-26.q1", "c.conv-26.q2"]
    assert all("session_3" in t.text and t.text.endswith("asked: ") for t in turns)
    (shot,) = read_ingestions(first / "turns.jsonl")[-1:]
    assert isinstance(shot, SnapshotRecord)
    assert {q.snapshot_sha256 for q in read_questions(second / "questions.jsonl")} == {shot.sha256}


def test_ctrl_c_during_ingestion_snapshots_nothing_and_resume_ingests_it_all(
    tmp_path: Path,
) -> None:
    """Ctrl-C while a history goes in: the session in flight settles, the rest is not ingested,
    the partial store is never snapshotted and the question neither asked nor recorded, so the
    resumed run ingests the whole history afresh."""
    locomo_file(tmp_path, samples=1, questions=1)
    arms = {"toy": _arm(MEMORY_ARM_INGEST_S="1.5")}
    study = _study(tmp_path, arms, format="locomo", path="locomo10.json")
    runs = tmp_path / "runs"
    process = spawn_harness("record", str(study), "--run-dir", str(runs), "--isolation", "local")
    deadline = time.monotonic() + 120
    while not [p for p in runs.glob("*/turns.jsonl") if p.read_text().strip()]:
        assert time.monotonic() < deadline and process.poll() is None
        time.sleep(0.1)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err[-3000:]
    stopped = only_run(runs)
    lines = read_ingestions(stopped / "turns.jsonl")
    assert 1 <= len(lines) < 3 and all(isinstance(r, IngestionRecord) for r in lines)
    assert read_turns(stopped / "turns.jsonl") == []
    assert read_questions(stopped / "questions.jsonl") == []
    done = harness(
        "record", str(study), "--run-dir", str(runs), "--isolation", "local",
        "--resume", str(stopped),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    (resumed,) = [p for p in runs.iterdir() if p != stopped and (p / "run.json").exists()]
    again = read_ingestions(resumed / "turns.jsonl")
    assert [type(r).__name__ for r in again] == ["IngestionRecord"] * 3 + ["SnapshotRecord"]
    (turn,) = read_turns(resumed / "turns.jsonl")
    assert turn.text.count("session_") == 3


def test_a_memory_study_passes_the_gate(tmp_path: Path) -> None:
    """Two record runs from fresh arms send the same requests, ingestion's included."""
    longmemeval_file(tmp_path, per_type=1)
    retrieval = {"command": f"{sys.executable} -m arms.retrieval", "env": {}}
    study = _study(
        tmp_path, {"retrieval": retrieval}, format="longmemeval", path="longmemeval_s.json", n=1
    )
    runs = tmp_path / "runs"
    done = harness("gate", str(study), "--run-dir", str(runs), "--isolation", "local")
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert "PASSED" in done.stdout
    (gate,) = [json.loads(p.read_text()) for p in runs.glob("*/gate.json")]
    assert gate["divergences"] == []


def test_a_snapshot_that_cannot_be_copied_fails_the_item_in_every_arm(tmp_path: Path) -> None:
    """The `fifo` arm leaves a fifo in its state folder while ingesting q000's answer session:
    copying it fails for real (shutil refuses special files), on every retry. q000 is then an
    infrastructure failure on both arms, whichever ran first; the other questions are not."""
    longmemeval_file(tmp_path, per_type=1)
    arms = {"plain": _arm(), "fifo": _arm(MEMORY_ARM_FIFO_SESSION="answer_0_1")}
    study = _study(tmp_path, arms, format="longmemeval", path="longmemeval_s.json")
    runs = tmp_path / "runs"
    harness("record", str(study), "--run-dir", str(runs), "--isolation", "local")
    run = only_run(runs)
    turns = read_turns(run / "turns.jsonl")
    by_item = {(t.item, t.arm): t for t in turns}
    assert len(turns) == 6 and len(by_item) == 6  # every question once per arm
    for arm in arms:
        failed = by_item[("q000", arm)]
        assert failed.outcome == "infra_failed", failed
        assert failed.error and "snapshot failed on fifo" in failed.error
        assert by_item[("q001_abs", arm)].outcome == "done"
        assert by_item[("q002", arm)].outcome == "done"
    shots = [r for r in read_ingestions(run / "turns.jsonl") if isinstance(r, SnapshotRecord)]
    assert ("fifo", "q000") not in {(s.arm, s.item) for s in shots}
    questions = {(q.item, q.arm): q for q in read_questions(run / "questions.jsonl")}
    assert questions[("q000", "plain")].outcome == "infra_failed"
