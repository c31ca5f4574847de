"""tests/study_builder.py writes a study folder that `load_study` reads back as it was meant."""

from __future__ import annotations

from pathlib import Path

from harness.study import load_study
from stubs.rules.replies import ReplyBook
from tests.study_builder import StudyBuilder


def test_the_written_study_loads_with_every_value_as_given(tmp_path: Path) -> None:
    odd = "python \"arm one.py\" --say 'a\\b'"  # quotes and a backslash: TOML must escape them
    builder = StudyBuilder(
        name="built",
        items=[
            {
                "id": "a",
                "clock": "2024-05-01T10:00:00",
                "turns": [{"user": "hi"}, {"user": "more"}],
            },
            {"id": "b", "clock": "2024-05-02T10:00:00", "turns": [{"user": "again"}]},
        ],
    )
    builder.arm("one", odd, GREETING='say "hi"').arm("two", "python two.py")
    builder.set(deadline_ms=4321, mask=["metadata.trace"], pins={"temperature": 0})
    builder.set(vendors={"openai": "http://127.0.0.1:9/v1"}, on_stray="fail")
    builder.stubs = {"schema": 1, "replies": {"main": ["Built: $user_first_words"]}}
    study = load_study(builder.write(tmp_path / "study"))
    assert study.file.name == "built"
    assert [item.id for item in study.items] == ["a", "b"]
    assert [len(item.turns) for item in study.items] == [2, 1]
    assert sorted(study.arms) == ["one", "two"]
    assert study.arms["one"].command == ["python", "arm one.py", "--say", "a\\b"]
    assert study.arms["one"].env == {"GREETING": 'say "hi"'}
    assert study.arms["two"].env == {}
    assert (study.file.deadline_ms, study.file.mask, study.file.on_stray) == (
        4321,
        ["metadata.trace"],
        "fail",
    )
    assert study.file.vendors == {"openai": "http://127.0.0.1:9/v1"}
    assert study.stubs_path == tmp_path / "study" / "stubs.toml"
    assert ReplyBook.load(study.stubs_path).stubs.replies["main"] == ["Built: $user_first_words"]


def test_compose_arms_are_a_list_and_no_arms_writes_none(tmp_path: Path) -> None:
    listed = StudyBuilder(arms=["bare", "retrieval"]).document()
    assert listed["arms"] == ["bare", "retrieval"]
    assert "arms" not in StudyBuilder().document()
    assert "stubs" not in StudyBuilder().document()
