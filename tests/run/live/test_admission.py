"""A live run's admission (harness/run/live/admission.py): refused in one line, before anything
is written, without a cap in plain dollars or without a passing record run of this very study;
a record run that failed, or is of another study, is no such proof."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.run.live.admission import admit_live, passing_record_run
from harness.study import Study, load_study
from tests.helpers.gate_studies import GATE_ARM
from tests.helpers.studies import harness, only_run
from tests.study_builder import StudyBuilder


def _study(tmp_path: Path) -> Study:
    path = StudyBuilder(name="admit").arm("toy", f"python {GATE_ARM}").write(tmp_path / "study")
    return load_study(path)


@pytest.mark.parametrize(("cap", "says"), [("", "live mode needs a cap"), ("ten", "ten")])
def test_a_live_run_without_a_cap_in_dollars_is_refused(
    tmp_path: Path, cap: str, says: str
) -> None:
    study, runs = _study(tmp_path), tmp_path / "runs"
    with pytest.raises(HarnessError, match=says):
        admit_live(study, runs, cap, skip_suite=True, new_branch=False)
    assert not runs.exists()


def test_only_a_passing_record_run_of_this_study_admits_it(tmp_path: Path) -> None:
    study, runs = _study(tmp_path), tmp_path / "runs"
    with pytest.raises(HarnessError, match="no passing record run of this study") as refused:
        admit_live(study, runs, "1", skip_suite=True, new_branch=False)
    assert f"harness record {study.path}" in str(refused.value.hint)
    harness("record", str(study.path), "--run-dir", str(runs), "--isolation", "local")
    assert passing_record_run(study, runs) == only_run(runs)
    other = load_study(StudyBuilder(name="other").arm("toy", "true").write(tmp_path / "other"))
    assert passing_record_run(other, runs) is None  # another study's run proves nothing
