"""`[pins] from_arm` at study load (harness/study/): the reference arm must be an arm of the
study and lead every turn (`[coupling] order` first), else the study is refused in one message;
the default output cap is in the loaded pins (so in run.json's pins)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.study import load_study
from tests.study_builder import StudyBuilder


def _study(tmp_path: Path, **fields: object) -> Path:
    builder = StudyBuilder().arm("B", "python b.py").arm("C0", "python c.py")
    return builder.set(**fields).write(tmp_path)


def test_a_reference_arm_that_leads_loads_with_the_default_cap(tmp_path: Path) -> None:
    study = load_study(_study(tmp_path, pins={"from_arm": "B"}, coupling={"order": ["B", "C0"]}))
    assert study.pins.from_arm == "B" and study.pins.output_cap == 6000
    assert study.pins.model_dump(exclude_none=True)["output_cap"] == 6000


def test_an_unknown_reference_arm_is_refused(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match=r"pins\.from_arm 'D' is not an arm"):
        load_study(_study(tmp_path, pins={"from_arm": "D"}, coupling={"order": ["B"]}))


@pytest.mark.parametrize("coupling", [None, {"order": ["C0", "B"]}], ids=["none", "second"])
def test_a_reference_arm_that_does_not_lead_is_refused(
    tmp_path: Path, coupling: dict[str, list[str]] | None
) -> None:
    fields: dict[str, object] = {"pins": {"from_arm": "B"}}
    if coupling is not None:
        fields["coupling"] = coupling
    with pytest.raises(HarnessError, match=r"pins\.from_arm 'B' must run first"):
        load_study(_study(tmp_path, **fields))
