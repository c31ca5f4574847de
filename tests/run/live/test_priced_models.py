"""Every model a study names is looked up in the price table at load (harness/run/live/
priced_models.py): a typo is a warning in record mode and a refusal in live mode, before any
container starts, naming the model and where the study names it."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.run.live.priced_models import check_priced_models
from harness.study import load_study
from tests.helpers.studies import harness
from tests.study_builder import StudyBuilder


def a_study(tmp_path: Path, model: str) -> Path:
    builder = StudyBuilder().arm("bare", "python -m arms.bare", ARM_MODEL=model)
    builder.arm("other", "python -m arms.bare", ARM_MODEL="gpt-4.1-mini")
    return builder.set(subject="openai/gpt-4.1-mini").write(tmp_path / "study")


def test_a_known_model_passes_in_both_modes(tmp_path: Path) -> None:
    study = load_study(a_study(tmp_path, "gpt-4.1-mini"))
    assert check_priced_models(study, "record") == [] == check_priced_models(study, "live")


def test_a_typo_is_a_warning_in_record_mode_and_refused_in_live(tmp_path: Path) -> None:
    study = load_study(a_study(tmp_path, "gpt-9-nosuch"))
    [warning] = check_priced_models(study, "record")
    assert "'gpt-9-nosuch' ([arms.bare] env ARM_MODEL)" in warning
    with pytest.raises(HarnessError) as refused:
        check_priced_models(study, "live")
    assert "gpt-9-nosuch" in str(refused.value) and "price table" in refused.value.hint


@pytest.mark.integration
def test_live_refuses_before_starting_anything(tmp_path: Path) -> None:
    path = a_study(tmp_path, "gpt-9-nosuch")
    runs = tmp_path / "runs"
    done = harness("live", str(path), "--cap", "1", "--run-dir", str(runs), "--skip-suite")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "gpt-9-nosuch" in done.stderr
    assert not runs.exists() or not any(runs.iterdir())  # no run directory was written
