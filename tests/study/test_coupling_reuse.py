"""`[coupling] reuse` pairs (harness/study/coupling.py): the leader runs before its follower, and a
follower has one leader."""

from __future__ import annotations

from pathlib import Path

from harness.study import Coupling, GateSection, coupling_problems

ARMS = ["B", "C0", "C1", "Z"]


def _problems(reuse: list[tuple[str, str]], tmp_path: Path) -> list[str]:
    coupling = Coupling(order=["B", "C0", "C1"], reuse=reuse)
    return coupling_problems(coupling, GateSection(), ARMS, tmp_path)


def test_a_leader_before_its_follower_passes(tmp_path: Path) -> None:
    assert _problems([("C0", "C1")], tmp_path) == []


def test_a_follower_before_its_leader_or_not_leading_is_refused(tmp_path: Path) -> None:
    assert any("must come before" in p for p in _problems([("C1", "C0")], tmp_path))
    assert any("must come before" in p for p in _problems([("C0", "Z")], tmp_path))


def test_a_follower_of_two_leaders_is_refused(tmp_path: Path) -> None:
    assert any("two leaders" in p for p in _problems([("B", "C1"), ("C0", "C1")], tmp_path))
