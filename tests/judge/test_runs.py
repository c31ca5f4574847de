"""What a stage judges: one study's runs, checked against the study; arm codes drawn per stage."""

from __future__ import annotations

from pathlib import Path
from random import Random

import pytest

from harness.errors import HarnessError
from harness.judge.runs import CODE_ALPHABET, load_source
from tests.judge.runs import write_run, write_study


def test_replies_are_held_by_code_and_the_codes_follow_the_seed(tmp_path: Path) -> None:
    study = write_study(tmp_path / "study", items=2)
    run = write_run(tmp_path / "runs", study, "run-a")
    one, two, other = (load_source([run], Random(s), None, None) for s in (1, 1, 2))
    assert one.codes == two.codes and one.codes != other.codes
    assert {c.arm for c in one.codes.values()} == {"bare", "retrieval"}
    assert all(len(code) == 4 and set(code) <= set(CODE_ALPHABET) for code in one.codes)
    assert len(one.replies) == 2 * 2 * 3
    assert one.messages[("item0", 2)][0] == "My sister lives in Lisbon."
    assert one.messages[("item0", 2)][2] == "What do you remember about me? Answer in one sentence."


def test_runs_of_two_studies_are_refused(tmp_path: Path) -> None:
    first = write_run(tmp_path / "runs", write_study(tmp_path / "s1", items=2), "run-a")
    second = write_run(tmp_path / "runs", write_study(tmp_path / "s2", items=3), "run-b")
    with pytest.raises(HarnessError, match="ran another study than run-a"):
        load_source([first, second], Random(0), None, None)
    with pytest.raises(HarnessError, match=r"the A/A run .* ran another study"):
        load_source([first], Random(0), second, "bare")


def test_a_study_edited_since_its_run_is_refused(tmp_path: Path) -> None:
    study = write_study(tmp_path / "study", items=2)
    run = write_run(tmp_path / "runs", study, "run-a")
    study.write_text(study.read_text().replace("deadline_ms = 20000", "deadline_ms = 30000"))
    with pytest.raises(HarnessError, match="changed since run-a ran"):
        load_source([run], Random(0), None, None)


def test_the_aa_arm_must_be_named_and_be_an_arm_of_both_runs(tmp_path: Path) -> None:
    study = write_study(tmp_path / "study", items=2)
    first = write_run(tmp_path / "runs", study, "run-a")
    second = write_run(tmp_path / "runs", study, "run-b", arms=("retrieval",))
    with pytest.raises(HarnessError, match="--aa-run needs --aa-arm"):
        load_source([first], Random(0), second, None)
    with pytest.raises(HarnessError, match="--aa-arm 'bare' is not an arm of both runs"):
        load_source([first], Random(0), second, "bare")
    source = load_source([first], Random(0), second, "retrieval")
    assert source.aa_codes is not None
    a, b = source.aa_codes
    assert source.codes[a].run == "run-a" and source.codes[b].run == "run-b"
    assert b not in source.arm_codes  # the second sample is judged only in the A/A pairs


def test_a_directory_that_is_not_a_study_run_is_refused(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="is not a run directory"):
        load_source([tmp_path], Random(0), None, None)
    with pytest.raises(HarnessError, match="at least one run directory"):
        load_source([], Random(0), None, None)


def test_items_edited_since_the_run_are_refused(tmp_path: Path) -> None:
    study = write_study(tmp_path / "study", items=2)
    run = write_run(tmp_path / "runs", study, "run-a")
    items = study.with_name("items.jsonl")
    items.write_text(items.read_text().replace("Lisbon", "Porto"))
    with pytest.raises(HarnessError, match="changed since run-a ran"):
        load_source([run], Random(0), None, None)
