"""`harness items STUDY` and the study's `[items]` table, through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.study import load_study
from tests.datasets.fixtures import locomo_file, longmemeval_entry, longmemeval_file
from tests.helpers.studies import harness
from tests.study_builder import StudyBuilder

pytestmark = pytest.mark.integration


def _study(folder: Path, **items: object) -> Path:
    return StudyBuilder().arm("toy", "python toy.py").set(items=items).write(folder)


def test_items_prints_the_draw_and_the_counts_per_stratum(tmp_path: Path) -> None:
    longmemeval_file(tmp_path)
    study = _study(
        tmp_path,
        format="longmemeval",
        path="longmemeval_s.json",
        n=6,
        seed=7,
        stratify="question_type",
    )
    done = harness("items", str(study))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len([line for line in lines if "history h." in line]) == 6
    assert "6 of 12 questions drawn (6 histories), stratified by question_type:" in lines
    for stratum in ("single-session-user", "multi-session", "knowledge-update"):
        assert f"  {stratum}: 2 of 4" in lines
    assert harness("items", str(study)).stdout == done.stdout  # the same draw every time


def test_locomo_questions_share_their_conversation(tmp_path: Path) -> None:
    locomo_file(tmp_path, samples=2, questions=6)
    study = _study(
        tmp_path, format="locomo", path="locomo10.json", stratify="category", per_conversation_max=4
    )
    loaded = load_study(study)
    assert len(loaded.items) == 8
    histories = {id(item.memory.history) for item in loaded.items if item.memory}
    assert len(histories) == 2
    item = loaded.items[0]
    assert item.memory is not None
    assert item.clock == item.memory.question.question_date
    assert item.turns[0].user == item.memory.question.question
    done = harness("items", str(study))
    assert "  category 2: " in done.stdout and "abstention questions: " in done.stdout


def test_a_file_not_in_the_format_is_one_line_naming_the_field(tmp_path: Path) -> None:
    entry = longmemeval_entry(0, "multi-session")
    del entry["haystack_dates"]
    (tmp_path / "bad.json").write_text(json.dumps([entry]))
    study = _study(tmp_path, format="longmemeval", path="bad.json")
    done = harness("items", str(study))
    assert done.returncode == 2
    assert "[0].haystack_dates: missing" in done.stderr
    assert "Traceback" not in done.stderr
    # A LoCoMo file named as LongMemEval says so too.
    locomo_file(tmp_path)
    done = harness("items", str(_study(tmp_path, format="longmemeval", path="locomo10.json")))
    assert done.returncode == 2 and "[0].question_id: missing" in done.stderr


def test_a_stratum_that_is_not_the_formats_is_refused(tmp_path: Path) -> None:
    locomo_file(tmp_path)
    study = _study(tmp_path, format="locomo", path="locomo10.json", stratify="question_type")
    done = harness("items", str(study))
    assert done.returncode == 2
    assert 'stratify = "question_type" is not a field of locomo; use "category"' in done.stderr


def test_scripted_items_are_listed_as_before(tmp_path: Path) -> None:
    study = StudyBuilder().arm("toy", "python toy.py").write(tmp_path)
    done = harness("items", str(study))
    assert done.returncode == 0
    assert done.stdout.splitlines() == ["i1  2024-05-01 10:00  1 turns", "1 items"]
