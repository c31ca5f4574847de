"""A third pass: two judges that each pass their own bars but agree less than the kappa bar get a
third judge, calibrated on the same controls; it resolves the axis when it passes, and the axis
gets no verdict when it fails or none is pinned. Recorded in the set either way."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.judge.judges import load_judges
from harness.judge.outcomes import read_outcomes
from harness.judge.plan import Settings
from harness.judge.stage import StageOptions, run_stage
from harness.judge.verify import verify_set
from rundir.judgments import JudgmentSet, read_votes
from tests.judge.runs import judge_entry, write_judges, write_rubrics, write_run, write_study

ERRING = str(Path(__file__).with_name("erring_judge.py"))
# With this seed and 10 controls per kind, two judges erring on 8% of replies (different ones)
# each pass strong, mild and clean bars, and their kappa falls to 0.585 < 0.60 (the test checks
# both, so a change of plan shows here rather than passing silently).
SEED = 20


def _erring(model: str, salt: str) -> dict[str, object]:
    return judge_entry(model, "low", "--salt", salt, "--percent", "8", script=ERRING)


def _stage(tmp_path: Path, **third: dict[str, object]) -> tuple[JudgmentSet, Path]:
    study = write_study(tmp_path / "study", items=10)
    run = write_run(tmp_path / "runs", study, "run-a")
    judges = write_judges(
        tmp_path / "judges.toml",
        alpha=_erring("rules-a", "a"),
        beta=_erring("rules-b", "b"),
        **third,
    )
    out = tmp_path / "set"
    options = StageOptions(seed=SEED, settings=Settings(controls_per_kind=10), jobs=4)
    manifest = run_stage(
        [run], write_rubrics(tmp_path / "rubrics", pairwise=False), judges, out, options
    )
    return manifest, out


def _preconditions(manifest: JudgmentSet) -> None:
    bars = {(b.judge, b.bar): b for b in manifest.calibration}
    for judge in ("alpha", "beta"):
        for name in ("strong detection", "mild detection", "clean flagged"):
            assert bars[(judge, name)].status == "passed", (judge, name)
    kappa = bars[("alpha+beta", "kappa")]
    assert kappa.status == "failed" and kappa.value == pytest.approx(0.585, abs=0.001)


def test_a_third_judge_that_passes_resolves_the_axis_and_joins_the_vote_set(
    tmp_path: Path,
) -> None:
    third = {**judge_entry("rules-g"), "third": True}
    manifest, out = _stage(tmp_path, gamma=third)
    _preconditions(manifest)
    (passed,) = manifest.third_pass
    assert (passed.rubric, passed.judge, passed.status) == ("grounded", "gamma", "resolved")
    assert passed.trigger == ["alpha+beta kappa 0.59 < 0.60"]
    assert [(a.status, a.reasons) for a in manifest.axes] == [("passed", [])]
    assert {b.judge for b in manifest.calibration if b.bar == "strong detection"} == {
        "alpha",
        "beta",
        "gamma",
    }
    assert {b.judge for b in manifest.stability} == {"alpha", "beta", "gamma"}
    outcomes = read_outcomes(out, tmp_path / "set.seal.json")
    assert outcomes.flags and all(f.votes == 3 for f in outcomes.flags)
    assert outcomes.set_aside == []
    assert verify_set(out) == []


def test_without_a_third_judge_the_pass_is_not_run_and_the_axis_gets_no_verdict(
    tmp_path: Path,
) -> None:
    manifest, out = _stage(tmp_path)
    _preconditions(manifest)
    (not_run,) = manifest.third_pass
    assert (not_run.judge, not_run.status) == (None, "not run")
    (axis,) = manifest.axes
    assert axis.status == "no verdict"
    assert axis.reasons[0] == (
        "third pass not run: no third judge is pinned (third = true in the judges file)"
    )
    assert any(r.startswith("judge alpha+beta failed kappa: 0.59") for r in axis.reasons)
    # Nothing confirmatory was sent.
    assert len({v.task for v in read_votes(out)}) == 2 * 2 * 50


def test_a_third_judge_that_misses_controls_fails_the_pass_by_name(tmp_path: Path) -> None:
    blind = {**judge_entry("rules-g", "low", "--behaviour", "blind"), "third": True}
    manifest, _ = _stage(tmp_path, gamma=blind)
    _preconditions(manifest)
    (failed,) = manifest.third_pass
    assert failed.status == "failed" and failed.detail.startswith("judge gamma strong detection")
    (axis,) = manifest.axes
    assert axis.status == "no verdict"
    assert any(r.startswith("judge gamma failed strong detection: 0.00") for r in axis.reasons)


def test_one_third_judge_at_most_and_two_besides_it(tmp_path: Path) -> None:
    third = {**judge_entry("rules-g"), "third": True}
    two = write_judges(
        tmp_path / "two.toml", a=judge_entry("x"), g=third, h={**third, "model": "y"}
    )
    with pytest.raises(HarnessError, match="more than one judge has third = true"):
        load_judges(two)
    one = write_judges(tmp_path / "one.toml", a=judge_entry("x"), g=third)
    study = write_study(tmp_path / "study", items=1)
    run = write_run(tmp_path / "runs", study, "run-a")
    with pytest.raises(HarnessError, match="pins 1 judge"):
        run_stage([run], write_rubrics(tmp_path / "r"), one, tmp_path / "set", StageOptions())
