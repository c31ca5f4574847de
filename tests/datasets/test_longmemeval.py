import json
from datetime import datetime
from pathlib import Path

import pytest

from harness.datasets import longmemeval
from harness.datasets.model import DatasetError
from tests.datasets.fixtures import longmemeval_entry, longmemeval_file


def test_loads_questions_with_their_own_history_in_date_order(tmp_path: Path) -> None:
    memories = longmemeval.load(longmemeval_file(tmp_path))
    assert len(memories) == 12
    first = memories[0]
    q = first.question
    assert (q.question_id, q.question_type, q.answer) == ("q000", "single-session-user", "Pepper0")
    assert q.question_date == datetime(2023, 5, 30, 23, 40)
    dates = [s.date for s in first.history.sessions]
    assert dates == sorted(dates)  # the file's order was not the dates' order
    assert [s.session_id for s in first.history.sessions] == ["s0_a", "s0_b", "answer_0_1"]
    assert q.evidence_sessions == ["answer_0_1"]
    assert q.evidence_texts == ["My cousin's dog is called Pepper0."]  # has_answer: false is not
    assert memories[5].question.answer == "3"  # a numeric answer, as text
    assert first.history is not memories[1].history


def test_abstention_ids_end_in_abs(tmp_path: Path) -> None:
    memories = longmemeval.load(longmemeval_file(tmp_path))
    abstaining = [m.question.question_id for m in memories if m.question.abstention]
    assert abstaining == ["q004_abs"]


@pytest.mark.parametrize(
    ("break_it", "named"),
    [
        (lambda e: e.pop("question_date"), "[1].question_date: missing"),
        (lambda e: e.update(question_date="May 30"), "[1].question_date: 'May 30' is not a date"),
        (lambda e: e.update(question_type="trivia"), "[1].question_type: 'trivia' is not one"),
        (lambda e: e["haystack_dates"].pop(), "[1].haystack_sessions: 3 sessions, 3 ids and 2"),
        (
            lambda e: e["haystack_sessions"][2][0].pop("content"),
            "[1].haystack_sessions[2][0].content",
        ),
        (lambda e: e["haystack_sessions"][0][1].update(role="system"), "[0][1].role: 'system'"),
        (lambda e: e.update(answer=None), "[1].answer: a string or a number"),
        (lambda e: e.update(haystack_dates="2023/05/20"), "[1].haystack_dates: not a list"),
    ],
)
def test_a_bad_field_is_named_in_one_line(tmp_path: Path, break_it, named: str) -> None:
    entries = [longmemeval_entry(0, "multi-session"), longmemeval_entry(1, "multi-session")]
    break_it(entries[1])
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(entries))
    with pytest.raises(DatasetError) as caught:
        longmemeval.load(path)
    message = str(caught.value)
    assert named in message and "\n" not in message


def test_a_file_of_another_shape_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"question_id": "q"}))
    with pytest.raises(DatasetError, match="not a JSON list"):
        longmemeval.load(path)
    path.write_text("[{")
    with pytest.raises(DatasetError, match="not JSON"):
        longmemeval.load(path)


def test_a_duplicate_question_id_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "dup.json"
    path.write_text(json.dumps([longmemeval_entry(0, "multi-session")] * 2))
    with pytest.raises(DatasetError, match=r"\[1\].question_id: 'q000' appears twice"):
        longmemeval.load(path)
