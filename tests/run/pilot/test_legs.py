"""The legs file: its checks, the items a leg selects, and the fixed drop order (never one of the
first five legs; a cap the first five alone pass is refused)."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import tomli_w

from harness.errors import HarnessError
from harness.run.pilot.legs import check_against_study, leg_items, load_legs, plan_drops


def _write(tmp_path: Path, doc: dict[str, Any]) -> Path:
    path = tmp_path / "legs.toml"
    path.write_text(tomli_w.dumps(doc))
    return path


def _legs(n: int, **extra: Any) -> dict[str, Any]:
    return {"schema": 1, "legs": [{"name": f"L{i}"} for i in range(1, n + 1)], **extra}


def test_without_a_drop_order_legs_go_from_the_last_back_to_the_sixth(tmp_path: Path) -> None:
    legs = load_legs(_write(tmp_path, _legs(8)))
    assert legs.order_of_drops() == ["L8", "L7", "L6"]
    cost = {f"L{i}": Decimal(1) for i in range(1, 9)}
    assert plan_drops(legs, cost, Decimal(6)) == (
        ["L1", "L2", "L3", "L4", "L5", "L6"],
        ["L8", "L7"],
    )
    assert plan_drops(legs, cost, Decimal(8)) == ([f"L{i}" for i in range(1, 9)], [])


def test_a_declared_drop_order_is_followed_and_stops_once_the_projection_fits(
    tmp_path: Path,
) -> None:
    legs = load_legs(_write(tmp_path, _legs(8, drop_order=["L6", "L8", "L7"])))
    cost = {f"L{i}": Decimal(1) for i in range(1, 9)}
    cost["L6"] = Decimal("0.5")  # dropped first although cheap: the order is fixed, not greedy
    kept, dropped = plan_drops(legs, cost, Decimal("6.5"))
    assert dropped == ["L6", "L8"] and kept == ["L1", "L2", "L3", "L4", "L5", "L7"]


def test_the_first_five_are_never_dropped_and_a_cap_they_pass_is_refused(tmp_path: Path) -> None:
    legs = load_legs(_write(tmp_path, _legs(7)))
    cost = {f"L{i}": Decimal(2) for i in range(1, 8)}
    with pytest.raises(HarnessError) as e:
        plan_drops(legs, cost, Decimal(9))
    assert "passes the cap $9" in e.value.message and "L7, L6" in e.value.message
    assert "\n" not in e.value.message


@pytest.mark.parametrize(
    ("doc", "words"),
    [
        (_legs(7, drop_order=["L7", "L2"]), "L2: the first 5 legs are never dropped"),
        (_legs(7, drop_order=["L7"]), "must name every leg after the fifth once: L6, L7"),
        ({"schema": 1, "legs": [{"name": "a"}, {"name": "a"}]}, "named twice: a"),
        ({"schema": 1, "legs": [{"name": "a", "tasks": ["t"]}]}, "unknown task(s) t"),
        ({"schema": 2, "legs": [{"name": "a"}]}, "legs schema 1; got 2"),
        ({"schema": 1, "legs": []}, "legs"),
        ({"schema": 1, "legs": [{"name": "a", "arm": ["B"]}]}, "legs.0.arm"),
    ],
)
def test_a_bad_legs_file_is_refused_naming_the_field(
    tmp_path: Path, doc: dict[str, Any], words: str
) -> None:
    with pytest.raises(HarnessError) as e:
        load_legs(_write(tmp_path, doc))
    assert words in e.value.message and str(tmp_path / "legs.toml") in e.value.message


def test_not_toml_and_a_missing_file_are_one_line_errors(tmp_path: Path) -> None:
    bad = tmp_path / "legs.toml"
    bad.write_text("legs = [")
    for path in (bad, tmp_path / "absent.toml"):
        with pytest.raises(HarnessError) as e:
            load_legs(path)
        assert str(path) in e.value.message


def test_a_leg_selects_its_tasks_and_items_by_id_or_pattern_in_the_studys_order(
    tmp_path: Path,
) -> None:
    doc = {
        "schema": 1,
        "tasks": {"recall": ["lme-*"], "other": ["x1"]},
        "legs": [
            {"name": "a", "tasks": ["recall"], "items": ["x2"]},
            {"name": "all"},
            {"name": "none", "items": ["nope*"]},
        ],
    }
    legs = load_legs(_write(tmp_path, doc))
    ids = ["x2", "lme-2", "x1", "lme-1"]
    assert leg_items(legs, legs.legs[0], ids) == ["x2", "lme-2", "lme-1"]
    assert leg_items(legs, legs.legs[1], ids) == ids
    with pytest.raises(HarnessError, match=r"leg 'none' selects no item"):
        check_against_study(legs, ["B"], ids)


def test_a_leg_naming_an_arm_the_study_lacks_is_refused(tmp_path: Path) -> None:
    legs = load_legs(_write(tmp_path, {"schema": 1, "legs": [{"name": "a", "arms": ["Q"]}]}))
    with pytest.raises(HarnessError, match="leg 'a': Q not an arm of the study"):
        check_against_study(legs, ["B", "C0"], ["i1"])


def test_in_a_coupled_study_a_leg_without_the_turn_contexts_source_is_refused(
    tmp_path: Path,
) -> None:
    doc = {
        "schema": 1,
        "legs": [{"name": "with", "arms": ["B", "C1"]}, {"name": "c1", "arms": ["C1"]}],
    }
    legs = load_legs(_write(tmp_path, doc))
    with pytest.raises(HarnessError, match="leg 'c1' runs C1 without B"):
        check_against_study(legs, ["B", "C0", "C1"], ["i1"], addon_from="B")
    check_against_study(legs, ["B", "C0", "C1"], ["i1"])  # no coupling: any subset
