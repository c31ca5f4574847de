"""A study's [limits] table: read with its sizes, defaulted when absent, and a mistake named
before anything starts (harness/study/model.py, rundir/runs/limits.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.study import load_study
from rundir.runs.limits import MIB
from tests.study_builder import StudyBuilder

ITEM = {"id": "i", "clock": "2024-05-01T10:00:00", "turns": [{"user": "hi"}]}


def study(tmp_path: Path, **fields: object) -> Path:
    return StudyBuilder(items=[ITEM]).arm("a", "python -m arms.bare").set(**fields).write(tmp_path)


def test_the_table_is_read_with_its_sizes(tmp_path: Path) -> None:
    limits = {"pids": 64, "memory": "256m", "cpus": 0.5, "disk": "1g"}
    loaded = load_study(study(tmp_path, limits=limits)).file.limits
    assert (loaded.pids, loaded.memory, loaded.cpus, loaded.disk) == (
        64,
        256 * MIB,
        0.5,
        1024 * MIB,
    )


def test_no_table_gives_the_safe_defaults(tmp_path: Path) -> None:
    loaded = load_study(study(tmp_path)).file.limits
    assert (loaded.pids, loaded.memory, loaded.cpus, loaded.disk) == (
        512,
        2048 * MIB,
        1.0,
        2048 * MIB,
    )


@pytest.mark.parametrize(
    ("limits", "named"),
    [
        ({"memory": "lots"}, "limits.memory"),
        ({"swap": "1g"}, "limits.swap"),
        ({"pids": 1}, "limits.pids"),
    ],
)
def test_a_mistake_is_named_before_anything_starts(
    tmp_path: Path, limits: dict[str, object], named: str
) -> None:
    with pytest.raises(HarnessError) as failed:
        load_study(study(tmp_path, limits=limits))
    assert named in failed.value.message
