"""The coupled study's rules (harness/study/coupling.py): the turn order (leaders first in the
study's order, the rest seeded per item and reproducible) and the study's checks of [coupling]
and [[gate.pairs]], refused at load in one message naming the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.study import (
    Coupling,
    GatePair,
    GateSection,
    coupling_problems,
    load_study,
    turn_order,
)
from tests.study_builder import StudyBuilder

ARMS = ["Z", "C1", "A", "B", "C0", "Y"]


def test_leaders_first_in_the_studys_order_the_rest_seeded() -> None:
    order = turn_order(7, "item-1", ARMS, ["B", "C0", "C1"])
    assert order[:3] == ["B", "C0", "C1"]
    assert sorted(order[3:]) == ["A", "Y", "Z"]
    assert turn_order(7, "item-1", ARMS, ["B", "C0", "C1"]) == order  # reproducible
    rests = {tuple(turn_order(7, f"item-{n}", ARMS, ["B", "C0", "C1"])[3:]) for n in range(30)}
    assert len(rests) > 1  # the followers' order changes across items


def test_a_leader_that_does_not_run_is_left_out() -> None:
    assert turn_order(1, "i", ["C1", "Z", "B"], ["B", "C0", "C1"])[:2] == ["B", "C1"]


def test_a_leader_named_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="named twice"):
        Coupling(order=["B", "B"])


def test_every_problem_is_named(tmp_path: Path) -> None:
    coupling = Coupling(order=["B", "X"], addon_from="Z")
    gate = GateSection(pairs=[GatePair(arms=("C0", "C0"), differ_by="missing.txt")])
    problems = coupling_problems(coupling, gate, ["B", "C0", "Z"], tmp_path)
    assert problems == [
        "coupling.order: X not an arm of the study",
        "coupling.addon_from: 'Z' must lead coupling.order (set order = [\"Z\", ...]): every "
        "other arm of the turn gets its turn context, so none may run before it",
        "gate.pairs.0.arms: a pair is two different arms",
        f"gate.pairs.0.differ_by: {tmp_path / 'missing.txt'} does not exist",
        "gate.pairs.0: the follower 'C0' must lead in coupling.order (its request is compared "
        "with its leader's of the same turn)",
    ]


def _study(tmp_path: Path, **fields: object) -> Path:
    builder = StudyBuilder().arm("B", "python b.py").arm("C0", "python c.py")
    return builder.arm("C1", "python c.py").set(**fields).write(tmp_path)


def test_a_study_with_a_good_coupling_loads(tmp_path: Path) -> None:
    (tmp_path / "elements.txt").write_text("item-1 0 x\n")
    study = load_study(
        _study(
            tmp_path,
            coupling={"order": ["B", "C0", "C1"], "addon_from": "B"},
            gate={"pairs": [{"arms": ["C0", "C1"], "differ_by": "elements.txt"}]},
        )
    )
    assert study.file.coupling is not None and study.file.coupling.addon_from == "B"
    assert study.file.gate.pairs[0].follower == "C1"


def test_a_bad_coupling_is_refused_at_load(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match=r"coupling\.order: D not an arm"):
        load_study(_study(tmp_path, coupling={"order": ["B", "D"]}))


def test_an_unknown_coupling_field_is_refused(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match=r"coupling\.leaders"):
        load_study(_study(tmp_path, coupling={"order": ["B"], "leaders": ["B"]}))


def test_a_study_without_coupling_is_not_coupled(tmp_path: Path) -> None:
    study = load_study(_study(tmp_path))
    assert study.file.coupling is None and study.file.gate.pairs == []


def test_a_reference_that_does_not_lead_is_refused(tmp_path: Path) -> None:
    """B after C0: C0 would run its turn before B's context exists (issue 36 item 3)."""
    coupling = Coupling(order=["C0", "B", "C1"], addon_from="B")
    problems = coupling_problems(coupling, GateSection(), ["B", "C0", "C1"], tmp_path)
    assert len(problems) == 1 and "'B' must lead coupling.order" in problems[0]
    with pytest.raises(HarnessError, match=r"must lead coupling\.order"):
        load_study(_study(tmp_path, coupling={"order": ["C0", "B", "C1"], "addon_from": "B"}))


@pytest.mark.parametrize("order", [["B", "C1", "C0"], ["B", "C1"]])
def test_a_gate_pair_whose_leader_runs_after_its_follower_is_refused(
    tmp_path: Path, order: list[str]
) -> None:
    (tmp_path / "elements.txt").write_text("item-1 0 x\n")
    gate = {"pairs": [{"arms": ["C0", "C1"], "differ_by": "elements.txt"}]}
    with pytest.raises(HarnessError, match="the leader 'C0' must come before 'C1'"):
        load_study(_study(tmp_path, coupling={"order": order, "addon_from": "B"}, gate=gate))
