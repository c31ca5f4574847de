"""The cross-arm gate's comparison (harness/checks/pair_gate.py): exactly one insertion of the
element and nothing else; an elements file that names no firing, or does not parse, fails the
pair (nothing checked is not a pass). Against real recorded runs: test_coupled_runs.py."""

from __future__ import annotations

from pathlib import Path

from harness.checks.pair_gate import check_pair, differs_by_exactly
from harness.study import GatePair

PAIR = GatePair(arms=("C0", "C1"), differ_by="elements.txt")


def test_differs_by_exactly_one_insertion() -> None:
    assert differs_by_exactly("abcd", "abXYcd", "XY")
    assert differs_by_exactly("abcd", "XYabcd", "XY") and differs_by_exactly("abcd", "abcdXY", "XY")
    assert differs_by_exactly("xaby", "xbaaby", "ba")  # the right place is its second occurrence
    assert not differs_by_exactly("abcd", "abXYcdX", "XY")  # something else changed too
    assert not differs_by_exactly("abcd", "abXYXYcd", "XY")  # added twice
    assert not differs_by_exactly("abcd", "abcd", "XY")  # not added
    assert not differs_by_exactly("abcd", "aXYbce", "XY")  # added, and a character changed


def test_a_file_naming_no_firing_fails_the_pair(tmp_path: Path) -> None:
    (tmp_path / "elements.txt").write_text("# nothing fires\n")
    result = check_pair(tmp_path, PAIR, [], [])
    assert not result.passed and result.checked == 0
    assert result.failures == ["elements.txt names no firing: nothing was checked"]


def test_a_malformed_file_fails_the_pair_naming_the_line(tmp_path: Path) -> None:
    (tmp_path / "elements.txt").write_text("router zero text\n")
    result = check_pair(tmp_path, PAIR, [], [])
    assert (
        not result.passed
        and "elements.txt:1: turn 'zero' is not a turn number" in (result.failures[0])
    )


def test_a_run_without_the_turns_calls_fails_naming_the_arm(tmp_path: Path) -> None:
    (tmp_path / "elements.txt").write_text("router 0 text\n")
    run = tmp_path / "run-1"
    run.mkdir()
    (run / "calls.jsonl").write_text("")
    result = check_pair(tmp_path, PAIR, [run], [])
    assert result.failures == ["run run-1 item router turn 1: C0 made no main call in that turn"]
