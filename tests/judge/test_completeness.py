"""Calibration counts what it answered against what it held: a bar answered on fewer items than
planned is incomplete however good the answered part looks, and its axis is incomplete, never
passed; a bar the answered part already fails is failed."""

from __future__ import annotations

from pathlib import Path

from harness.judge.calibration import bar
from harness.judge.plan import Settings
from harness.judge.stage import StageOptions, run_stage
from tests.judge.runs import judge_entry, write_judges, write_rubrics, write_run, write_study

ERRING = str(Path(__file__).with_name("erring_judge.py"))


def test_a_bar_short_of_its_items_is_incomplete_unless_already_failed() -> None:
    assert bar("r", "j", "strong detection", 27, 27, 30, ">=", 0.90).status == "incomplete"
    assert bar("r", "j", "strong detection", 30, 30, 30, ">=", 0.90).status == "passed"
    assert bar("r", "j", "strong detection", 20, 27, 30, ">=", 0.90).status == "failed"
    assert bar("r", "j", "clean flagged", 0, 0, 10, "<=", 0.15).status == "incomplete"
    assert bar("r", "j", "clean flagged", 0, 0, 0, "<=", 0.15).status == "incomplete"


def test_a_judge_that_leaves_controls_unanswered_leaves_its_axis_incomplete(
    tmp_path: Path,
) -> None:
    study = write_study(tmp_path / "study", items=10)
    run = write_run(tmp_path / "runs", study, "run-a")
    silent = judge_entry(
        "rules-b", "low", "--salt", "b", "--percent", "0", "--silent", "10", script=ERRING
    )
    judges = write_judges(tmp_path / "judges.toml", alpha=judge_entry("rules-a"), beta=silent)
    manifest = run_stage(
        [run],
        write_rubrics(tmp_path / "rubrics", pairwise=False),
        judges,
        tmp_path / "set",
        StageOptions(seed=4, settings=Settings(controls_per_kind=10), jobs=4, attempts=2),
    )
    beta = [b for b in manifest.calibration if b.judge == "beta"]
    short = [b for b in beta if b.answered < b.held]
    assert short, "the silent judge left no control unanswered: pick another salt"
    # What it did answer, it answered right: the bars are short, not failed.
    assert all(b.status == "incomplete" and b.value in (0.0, 1.0) for b in short)
    (axis,) = manifest.axes
    assert axis.status == "incomplete"
    assert f"judge beta {short[0].bar}: {short[0].answered} answered of {short[0].held} held" in (
        axis.reasons
    )
    assert "calibration did not pass: no confirmatory judgment was sent" in axis.reasons
