"""An arm's name cannot hold "@" (harness/study/model.py): a worker's copy of arm A is named A@k in
every run file (rundir/instances.py), so an arm called "a@2" would be read back as worker 2 of
arm "a". The study refuses it when it loads, naming the arm."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.study import load_study

ITEM = '{"id": "i1", "clock": "2024-05-01T10:00:00", "turns": [{"user": "hi"}]}\n'


def write_study(folder: Path, arms_toml: str) -> Path:
    (folder / "items.jsonl").write_text(ITEM, encoding="utf-8")
    study = folder / "study.toml"
    study.write_text(f'name = "names"\nitems = "items.jsonl"\n{arms_toml}', encoding="utf-8")
    return study


def test_an_arm_named_with_the_worker_mark_is_refused(tmp_path: Path) -> None:
    study = write_study(tmp_path, '[arms."a@2"]\ncommand = "python -m arms.bare"\n')
    with pytest.raises(HarnessError) as refused:
        load_study(study)
    assert "arm name 'a@2' holds '@'" in str(refused.value)


def test_a_compose_service_named_with_the_mark_is_refused(tmp_path: Path) -> None:
    study = write_study(tmp_path, 'arms = ["a@b"]\n')
    with pytest.raises(HarnessError, match="holds '@'"):
        load_study(study)


def test_names_without_the_mark_load(tmp_path: Path) -> None:
    study = write_study(
        tmp_path, '[arms."mem0.v2"]\ncommand = "python -m arms.bare"\n[arms.b_1]\ncommand = "x"\n'
    )
    assert list(load_study(study).arms) == ["mem0.v2", "b_1"]
