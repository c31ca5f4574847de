"""A third pass: two judges that each pass their own bars but agree less than the kappa bar get a
third judge, calibrated on the same controls; it resolves the axis when it passes, and the axis
gets no verdict when it fails or none is pinned. Recorded in the set either way."""

from __future__ import annotations

from pathlib import Path

import pytest
import tomli_w

from harness.errors import HarnessError
from harness.judge.judges import load_judges
from harness.judge.outcomes import read_outcomes
from harness.judge.plan import Settings
from harness.judge.stage import StageOptions, run_stage
from harness.judge.verify import verify_set
from rundir.judgments.files import read_tasks, read_votes
from rundir.judgments.records import JudgmentSet
from tests.judge.runs import judge_entry, write_judges, write_rubrics, write_run, write_study

ERRING = str(Path(__file__).with_name("erring_judge.py"))
# With this seed, these salts and 10 controls per kind, two judges erring on 9% of replies
# (different ones) each pass strong, mild, clean and padding bars, and their kappa falls to
# 0.577 < 0.60, while each misses at most 1 of its 10 mixed-in controls, so the running watch
# lets the resolved axis pass (the test checks these, so a change of plan shows here rather than
# passing silently; the clean controls come from the fixed clean set, so few seeds do this).
SEED = 4
SALTS = {"alpha": "a20", "beta": "b20"}
PERCENT = "9"


def _erring(model: str, salt: str) -> dict[str, object]:
    return judge_entry(model, "low", "--salt", salt, "--percent", PERCENT, script=ERRING)


def _stage(tmp_path: Path, **third: dict[str, object]) -> tuple[JudgmentSet, Path]:
    study = write_study(tmp_path / "study", items=10)
    run = write_run(tmp_path / "runs", study, "run-a")
    judges = write_judges(
        tmp_path / "judges.toml",
        alpha=_erring("rules-a", SALTS["alpha"]),
        beta=_erring("rules-b", SALTS["beta"]),
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
        for name in (
            "strong detection",
            "mild detection",
            "clean flagged",
            "padding read the same",
        ):
            assert bars[(judge, name)].status == "passed", (judge, name)
    kappa = bars[("alpha+beta", "kappa")]
    assert kappa.status == "failed" and kappa.value == pytest.approx(0.577, abs=0.001)


def test_a_third_judge_that_passes_resolves_the_axis_and_joins_the_vote_set(
    tmp_path: Path,
) -> None:
    third = {**judge_entry("rules-g"), "third": True}
    manifest, out = _stage(tmp_path, gamma=third)
    _preconditions(manifest)
    (passed,) = manifest.third_pass
    assert (passed.rubric, passed.judge, passed.status) == ("grounded", "gamma", "resolved")
    assert passed.trigger == ["alpha+beta kappa 0.58 < 0.60"]
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
    assert any(r.startswith("judge alpha+beta failed kappa: 0.58") for r in axis.reasons)
    # Nothing confirmatory was sent.
    assert len({v.task for v in read_votes(out)}) == 2 * 2 * 60  # 6 kinds x 10, asked twice


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


def _reask_stage(tmp_path: Path, once: bool) -> tuple[JudgmentSet, Path]:
    """Two erring judges and no third: judges.toml says third = "reask". With `once`, each
    judge errs only the first two times it sees a prompt (a control and its stability repeat), so
    re-asked, it answers honestly."""
    entries = {}
    for name, model in (("alpha", "rules-a"), ("beta", "rules-b")):
        salt = SALTS[name]
        extra = ["--salt", salt, "--percent", PERCENT]
        if once:
            (tmp_path / f"seen-{name}").mkdir()
            extra += ["--remember", str(tmp_path / f"seen-{name}"), "--honest-after", "2"]
        entries[name] = judge_entry(model, "low", *extra, script=ERRING)
    judges = tmp_path / "judges.toml"
    judges.write_text(tomli_w.dumps({"third": "reask", "judges": entries}))
    study = write_study(tmp_path / "study", items=10)
    run = write_run(tmp_path / "runs", study, "run-a")
    out = tmp_path / "set"
    options = StageOptions(seed=SEED, settings=Settings(controls_per_kind=10), jobs=4)
    rubrics = write_rubrics(tmp_path / "rubrics", pairwise=False)
    return run_stage([run], rubrics, judges, out, options), out


def test_the_reask_form_asks_both_judges_again_and_resolves_when_they_now_agree(
    tmp_path: Path,
) -> None:
    manifest, out = _reask_stage(tmp_path, once=True)
    _preconditions(manifest)
    (reask,) = manifest.third_pass
    assert (reask.form, reask.judge, reask.status) == ("reask", None, "resolved")
    assert reask.trigger == ["alpha+beta kappa 0.58 < 0.60"]
    tasks = {t.id: t for t in read_tasks(out)}
    again = [t for t in tasks.values() if t.reask_of is not None]
    # Both judges were re-asked exactly the prompts they disagreed on, as fresh prompt files.
    assert sorted(t.reask_of for t in again) == sorted(reask.reasked) and again
    assert {tasks[t.reask_of].judge for t in again if t.reask_of} == {"alpha", "beta"}
    for t in again:
        first = tasks[str(t.reask_of)]
        assert (t.judgment, t.order, t.labels) == (first.judgment, first.order, first.labels)
        assert (out / "prompts" / f"{t.id}.txt").read_bytes() == (
            out / "prompts" / f"{first.id}.txt"
        ).read_bytes()
    votes = {v.task: v for v in read_votes(out) if v.status == "accepted"}
    assert all(t.id in votes and t.reask_of in votes for t in again)  # beside the first ones
    assert any(votes[t.id].verdict != votes[str(t.reask_of)].verdict for t in again)
    (remeasured,) = [b for b in manifest.calibration if b.bar == "kappa re-asked"]
    assert remeasured.status == "passed" and remeasured.value is not None
    assert remeasured.value >= 0.60 and "clears the bar" in reask.detail
    (axis,) = manifest.axes
    assert not any("kappa" in r or "third pass" in r for r in axis.reasons), axis.reasons
    outcomes = read_outcomes(out, tmp_path / "set.seal.json")
    assert outcomes.flags and all(f.votes == 2 for f in outcomes.flags)  # the two judges only
    assert verify_set(out) == []


def test_the_reask_form_leaves_no_verdict_when_the_judges_still_disagree(
    tmp_path: Path,
) -> None:
    manifest, out = _reask_stage(tmp_path, once=False)
    _preconditions(manifest)
    (reask,) = manifest.third_pass
    assert (reask.form, reask.status) == ("reask", "failed") and reask.reasked
    assert "0.58 still below the bar" in reask.detail
    (axis,) = manifest.axes
    assert axis.status == "no verdict"
    assert axis.reasons[0] == f"third pass failed: {reask.detail}"
    # Nothing confirmatory was sent: only the calibration prompts and their re-asks.
    tasks = {t.id: t for t in read_tasks(out)}
    assert {tasks[v.task].phase for v in read_votes(out)} == {"calibration"}
    assert verify_set(out) == []


def test_the_reask_form_is_one_form_of_the_third_pass(tmp_path: Path) -> None:
    both = {
        "third": "reask",
        "judges": {"a": judge_entry("x"), "g": {**judge_entry("y"), "third": True}},
    }
    (tmp_path / "both.toml").write_text(tomli_w.dumps(both))
    with pytest.raises(HarnessError, match='third = "reask" and a third judge'):
        load_judges(tmp_path / "both.toml")
    other = {"third": "again", "judges": {"a": judge_entry("x")}}
    (tmp_path / "other.toml").write_text(tomli_w.dumps(other))
    with pytest.raises(HarnessError, match='the only form by name is "reask"'):
        load_judges(tmp_path / "other.toml")
