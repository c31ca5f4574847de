"""Which arms a live run leaves out (harness/run/live/dropped.py): the follower of a failed pair,
with why; a gate that never checked a declared pair, or whose elements file has changed since, is
refused; an arm asked for by name that was dropped is refused, and so is dropping every arm."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.run.live.dropped import dropped_followers, without_dropped
from harness.study import Study, load_study
from rundir.runs.gate_record import GateCounts, GateRecord, PairCheck
from tests.study_builder import StudyBuilder

ELEMENTS = "item-1 0 be kind\n"


@pytest.fixture
def study(tmp_path: Path) -> Study:
    (tmp_path / "elements.txt").write_text(ELEMENTS)
    builder = StudyBuilder().arm("B", "python b.py").arm("C0", "python c.py")
    builder = builder.arm("C1", "python c.py").set(
        coupling={"order": ["B", "C0", "C1"]},
        gate={"pairs": [{"arms": ["C0", "C1"], "differ_by": "elements.txt"}]},
    )
    return load_study(builder.write(tmp_path))


def _gate(tmp_path: Path, pairs: list[PairCheck]) -> Path:
    record = GateRecord(
        gate_id="g1", study="s", study_path="s", study_sha256="x", compose_sha256=None,
        items_sha256="y", started="t0", ended="t1", passed=True, masks=[], runs=[],
        counts=GateCounts(), pairs=pairs,
    )  # fmt: skip
    path = tmp_path / "gate.json"
    path.write_text(record.model_dump_json(by_alias=True))
    return path


def _pair(passed: bool, elements: str = ELEMENTS) -> PairCheck:
    return PairCheck(
        leader="C0", follower="C1", differ_by="elements.txt", passed=passed,
        elements_sha256=hashlib.sha256(elements.encode()).hexdigest(), checked=1,
        failures=[] if passed else ["run r item item-1 turn 1: C1's request is C0's"],
    )  # fmt: skip


def test_a_failed_pair_drops_its_follower_with_why(study: Study, tmp_path: Path) -> None:
    dropped = dropped_followers(study, _gate(tmp_path, [_pair(False)]))
    assert dropped == {
        "C1": "cross-arm gate g1: C1's requests do not differ from C0's by exactly the element "
        "(run r item item-1 turn 1: C1's request is C0's); C0 is the candidate"
    }
    assert without_dropped(["B", "C0", "C1"], [], dropped) == ["B", "C0"]


def test_a_passing_pair_drops_nothing(study: Study, tmp_path: Path) -> None:
    assert dropped_followers(study, _gate(tmp_path, [_pair(True)])) == {}


def test_a_gate_without_the_pair_is_refused(study: Study, tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match="gate g1 has no cross-arm result for C0 -> C1"):
        dropped_followers(study, _gate(tmp_path, []))


def test_an_elements_file_changed_since_the_gate_is_refused(study: Study, tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match="changed since gate g1"):
        dropped_followers(study, _gate(tmp_path, [_pair(True, "item-1 0 other\n")]))


def test_an_unreadable_gate_is_refused(study: Study, tmp_path: Path) -> None:
    (tmp_path / "gate.json").write_text("{")
    with pytest.raises(HarnessError, match="does not parse"):
        dropped_followers(study, tmp_path / "gate.json")


def test_asking_for_a_dropped_arm_or_dropping_all_is_refused() -> None:
    dropped = {"C1": "why"}
    with pytest.raises(HarnessError, match="--arm C1: dropped before any spend: why"):
        without_dropped(["C1"], ["C1"], dropped)
    with pytest.raises(HarnessError, match="every arm asked for was dropped"):
        without_dropped(["C1"], [], dropped)
