import json
from datetime import datetime
from pathlib import Path

import pytest

from harness.datasets import locomo
from harness.datasets.model import DatasetError
from tests.datasets.fixtures import locomo_file, locomo_sample


def test_a_conversation_is_one_history_shared_by_its_questions(tmp_path: Path) -> None:
    memories = locomo.load(locomo_file(tmp_path))
    assert len(memories) == 12
    first, second = memories[0], memories[1]
    assert first.history is second.history  # ingested once for all its questions
    assert first.history is not memories[6].history
    history = first.history
    assert history.id == "c.conv-26"
    assert [s.session_id for s in history.sessions] == ["session_1", "session_2", "session_3"]
    assert history.sessions[0].date == datetime(2023, 5, 8, 13, 56)
    roles = [(m.role, m.speaker) for m in history.sessions[0].messages]
    assert roles == [("user", "Caroline"), ("assistant", "Melanie"), ("user", "Caroline")]
    assert history.sessions[0].messages[2].content.endswith("[shares a photo: a photo of a sunset]")
    # No date of its own: asked at the last session's.
    assert first.question.question_date == datetime(2023, 7, 3, 20, 18)


def test_questions_carry_category_gold_and_evidence(tmp_path: Path) -> None:
    memories = locomo.load(locomo_file(tmp_path))
    q = memories[1].question
    assert (q.category, q.answer, q.abstention) == (2, "2022", False)
    assert q.evidence_sessions == ["session_2"]
    assert q.evidence_texts == ["conv-26: I painted a lake 2"]
    adversarial = memories[5].question
    assert (adversarial.category, adversarial.answer, adversarial.abstention) == (
        5,
        "a lighthouse",
        True,
    )


def test_two_evidence_ids_in_one_string_both_count(tmp_path: Path) -> None:
    sample = locomo_sample("conv-1", 1)
    sample["qa"][0]["evidence"] = ["D1:2; D3:1"]
    path = tmp_path / "l.json"
    path.write_text(json.dumps([sample]))
    [memory] = locomo.load(path)
    assert memory.question.evidence_sessions == ["session_1", "session_3"]
    assert len(memory.question.evidence_texts) == 2


@pytest.mark.parametrize(
    ("break_it", "named"),
    [
        (
            lambda s: s["conversation"].pop("session_2_date_time"),
            "conversation.session_2_date_time: missing",
        ),
        (
            lambda s: s["conversation"].update(session_1_date_time="8 May 2023"),
            "conversation.session_1_date_time: '8 May 2023' is not a date",
        ),
        (lambda s: s["qa"][3].pop("category"), "qa[3].category: missing"),
        (lambda s: s["qa"][5].pop("adversarial_answer"), "qa[5].adversarial_answer: missing"),
        (lambda s: s["conversation"]["session_3"][1].pop("text"), "session_3[1].text: missing"),
        (lambda s: s.pop("conversation"), "[0].conversation: missing"),
    ],
)
def test_a_bad_field_is_named_in_one_line(tmp_path: Path, break_it, named: str) -> None:
    sample = locomo_sample("conv-26")
    break_it(sample)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps([sample]))
    with pytest.raises(DatasetError) as caught:
        locomo.load(path)
    assert named in str(caught.value) and "\n" not in str(caught.value)


def test_a_longmemeval_file_is_not_locomo(tmp_path: Path) -> None:
    from tests.datasets.fixtures import longmemeval_file

    with pytest.raises(DatasetError, match=r"\[0\].sample_id: missing"):
        locomo.load(longmemeval_file(tmp_path))
