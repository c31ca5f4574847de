"""A whole judging stage on record-mode runs, judged by two stub judges (real processes), then by
judges with a known fault: each must be caught, named, and its axis denied a verdict."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.judge.outcomes import read_outcomes
from harness.judge.plan import Settings
from harness.judge.stage import StageOptions, run_stage
from harness.judge.verify import verify_set
from rundir.errors import RunDirError
from rundir.judgments.files import read_tasks, read_votes, sha256_bytes
from rundir.judgments.records import JudgmentSet
from rundir.judgments.seal import open_seal
from tests.judge.runs import judge_entry, write_judges, write_rubrics, write_run, write_study

FAST = Settings(controls_per_kind=4)


@pytest.fixture(scope="module")
def honest(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, JudgmentSet, Path]:
    root = tmp_path_factory.mktemp("honest")
    study = write_study(root / "study")
    first = write_run(root / "runs", study, "run-a")
    second = write_run(root / "runs", study, "run-b")
    judges = write_judges(
        root / "judges.toml", alpha=judge_entry("rules-a"), beta=judge_entry("rules-b", "high")
    )
    out = root / "set"
    options = StageOptions(
        seed=11, aa_run=second, aa_arm="bare", settings=FAST, jobs=4, resamples=2000
    )
    manifest = run_stage([first], write_rubrics(root / "rubrics"), judges, out, options)
    return out, manifest, root / "set.seal.json"


def test_two_honest_stub_judges_pass_every_axis(honest: tuple[Path, JudgmentSet, Path]) -> None:
    _, manifest, _ = honest
    assert {a.rubric: a.status for a in manifest.axes} == {
        "better_reply": "passed",
        "grounded": "passed",
    }
    bars = {(b.rubric, b.judge, b.bar): b for b in manifest.calibration}
    # Every bar was computed for both judges, and on all it held.
    for judge in ("alpha", "beta"):
        for name in ("strong detection", "mild detection", "clean flagged"):
            bar = bars[("grounded", judge, name)]
            assert bar.answered == bar.held > 0 and bar.status == "passed"
        assert bars[("better_reply", judge, "same verdict both orders")].value == 1.0
    assert bars[("grounded", "alpha+beta", "kappa")].value == pytest.approx(1.0)
    assert [s.status for s in manifest.stability] == ["passed"] * 4
    (aa,) = manifest.aa
    assert (aa.status, aa.pairs, aa.win_rate) == ("passed", 30, 0.5)
    assert manifest.set_aside == [] and manifest.halts == []


def test_prompts_show_neither_arm_names_nor_codes_and_come_in_both_orders(
    honest: tuple[Path, JudgmentSet, Path],
) -> None:
    out, _, seal_path = honest
    seal = open_seal(out, seal_path)
    assert {v.arm for v in seal.codes.values()} == {"bare", "retrieval"}
    assert len(seal.codes) == 3  # two arms, and the A/A arm's second sample under its own code
    tasks = read_tasks(out)
    for task in tasks:
        prompt = (out / "prompts" / f"{task.id}.txt").read_text()
        for word in ("bare", "retrieval", "run-a", "run-b", *seal.codes):
            assert word not in prompt, (task.id, word)
    pairs: dict[str, set[tuple[str, str | None]]] = {}
    for task in tasks:
        if task.kind == "pairwise" and task.role in ("confirmatory", "aa"):
            pairs.setdefault(task.judgment, set()).add((task.judge, task.order))
            text = (out / "prompts" / f"{task.id}.txt").read_text()
            assert "Reply 1" in text and "Reply 2" in text
    full = {(j, o) for j in ("alpha", "beta") for o in ("first", "swapped")}
    assert pairs and all(v == full for v in pairs.values())
    # The two orders of one judge show the same two replies, swapped.
    by = {(t.judgment, t.judge, t.order): t for t in tasks if t.kind == "pairwise"}
    some = next(t for t in tasks if t.role == "confirmatory" and t.kind == "pairwise")
    swapped = by[(some.judgment, some.judge, "swapped" if some.order == "first" else "first")]
    assert swapped.labels == list(reversed(some.labels))


def test_every_vote_is_traced_and_tampering_is_found(
    honest: tuple[Path, JudgmentSet, Path], tmp_path: Path
) -> None:
    out, _, _ = honest
    assert verify_set(out) == []
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    flags = {t.id for t in read_tasks(copy) if t.kind == "flag"}
    vote = next(v for v in read_votes(copy) if v.status == "accepted" and v.task in flags)
    reply = copy / str(vote.reply_file)
    text = reply.read_text()
    flipped = (
        text.replace("verdict: OK", "verdict: FLAG")
        if "OK" in text
        else text.replace("verdict: FLAG", "verdict: OK")
    )
    reply.write_text(flipped)
    problems = verify_set(copy)
    assert any(vote.task in p and "reply file is missing or changed" in p for p in problems)
    # A forger who also rewrites the vote's hash is caught twice: the votes file is not the one
    # the manifest hashed, and the reply no longer reads as the verdict the vote records.
    votes = (
        (copy / "votes.jsonl")
        .read_text()
        .replace(str(vote.reply_sha256), sha256_bytes(flipped.encode()))
    )
    (copy / "votes.jsonl").write_text(votes)
    problems = verify_set(copy)
    assert "votes.jsonl is not the file the manifest hashed" in problems
    assert any(vote.task in p and "the reply reads as accepted" in p for p in problems)


def test_the_seal_is_outside_the_set_and_a_wrong_one_is_refused(
    honest: tuple[Path, JudgmentSet, Path], tmp_path: Path
) -> None:
    out, _, seal_path = honest
    assert not any(p.name.endswith("seal.json") for p in out.rglob("*"))
    assert (seal_path.stat().st_mode & 0o077) == 0
    forged = tmp_path / "forged.json"
    data = json.loads(seal_path.read_text())
    first, second = list(data["codes"])[:2]
    data["codes"][first], data["codes"][second] = data["codes"][second], data["codes"][first]
    forged.write_text(json.dumps(data, indent=2) + "\n")
    with pytest.raises(RunDirError, match="is not the seal of"):
        open_seal(out, forged)


def _stage(
    tmp_path: Path,
    other: dict[str, object],
    *,
    flag: bool,
    pairwise: bool,
    items: int = 4,
    **options: object,
) -> JudgmentSet:
    study = write_study(tmp_path / "study", items=items)
    run = write_run(tmp_path / "runs", study, "run-a")
    judges = write_judges(tmp_path / "judges.toml", alpha=judge_entry("rules-a"), gamma=other)
    settings = options.pop("settings", FAST)
    return run_stage(
        [run],
        write_rubrics(tmp_path / "rubrics", flag=flag, pairwise=pairwise),
        judges,
        tmp_path / "set",
        StageOptions(seed=3, settings=settings, attempts=2, **options),
    )  # type: ignore[arg-type]


def test_a_position_biased_judge_is_caught_and_its_axis_gets_no_verdict(tmp_path: Path) -> None:
    manifest = _stage(
        tmp_path,
        judge_entry("rules-g", "low", "--behaviour", "position-bias"),
        flag=False,
        pairwise=True,
    )
    (axis,) = manifest.axes
    assert axis.status == "no verdict"
    assert any(
        r.startswith("judge gamma failed same verdict both orders: 0.00") for r in axis.reasons
    )
    assert not any("judge alpha failed" in r for r in axis.reasons)
    # Calibration failed, so no confirmatory prompt of that rubric was ever sent.
    sent = {v.task for v in read_votes(tmp_path / "set")}
    assert not any(t.id in sent for t in read_tasks(tmp_path / "set") if t.phase == "confirmatory")


def test_a_judge_naming_another_model_is_discarded_asked_again_and_named(tmp_path: Path) -> None:
    manifest = _stage(
        tmp_path,
        judge_entry("rules-g", "low", "--claim-model", "rules-x"),
        flag=True,
        pairwise=False,
    )
    (axis,) = manifest.axes
    assert axis.status in ("no verdict", "incomplete")
    assert any(r.startswith("judge gamma strong detection: 0 answered of") for r in axis.reasons)
    votes = [v for v in read_votes(tmp_path / "set") if v.judge == "gamma"]
    assert votes and all(v.status == "wrong_pin" and v.verdict is None for v in votes)
    assert {v.attempt for v in votes} == {1, 2}  # asked again, then given up
    assert "model 'rules-x' (pinned 'rules-g')" in str(votes[0].detail)


def test_a_judge_that_misses_planted_controls_is_caught(tmp_path: Path) -> None:
    manifest = _stage(
        tmp_path, judge_entry("rules-g", "low", "--behaviour", "blind"), flag=True, pairwise=True
    )
    assert {a.rubric: a.status for a in manifest.axes} == {
        "better_reply": "no verdict",
        "grounded": "no verdict",
    }
    reasons = {a.rubric: a.reasons for a in manifest.axes}
    assert any(
        r.startswith("judge gamma failed strong detection: 0.00") for r in reasons["grounded"]
    )
    assert any(
        r.startswith("judge gamma failed pairwise detection: 0.00") for r in reasons["better_reply"]
    )
    assert any(r.startswith("judge alpha+gamma failed kappa") for r in reasons["grounded"])


def test_an_aa_sample_that_differs_fails_the_aa_control(tmp_path: Path) -> None:
    study = write_study(tmp_path / "study")
    first = write_run(tmp_path / "runs", study, "run-a")
    # The second sample's replies lose their closing words: judges blind to arms must prefer the
    # first sample, and the A/A control must say the machinery is not neutral.
    second = write_run(
        tmp_path / "runs",
        study,
        "run-b",
        lambda arm, item, turn, said: " ".join(f"Noted: {said}".split()[:-1]),
    )
    judges = write_judges(
        tmp_path / "judges.toml", alpha=judge_entry("rules-a"), beta=judge_entry("rules-b")
    )
    manifest = run_stage(
        [first],
        write_rubrics(tmp_path / "rubrics", flag=False),
        judges,
        tmp_path / "set",
        StageOptions(seed=5, aa_run=second, aa_arm="retrieval", settings=FAST, resamples=2000),
    )
    (aa,) = manifest.aa
    assert aa.status == "failed" and aa.win_rate == 1.0 and aa.pairs == 30
    assert manifest.axes[0].status == "no verdict"


def test_fewer_aa_pairs_than_needed_is_incomplete(tmp_path: Path) -> None:
    study = write_study(tmp_path / "study", items=4)
    first = write_run(tmp_path / "runs", study, "run-a")
    second = write_run(tmp_path / "runs", study, "run-b")
    judges = write_judges(
        tmp_path / "judges.toml", alpha=judge_entry("rules-a"), beta=judge_entry("rules-b")
    )
    manifest = run_stage(
        [first],
        write_rubrics(tmp_path / "rubrics", flag=False),
        judges,
        tmp_path / "set",
        StageOptions(seed=5, aa_run=second, aa_arm="bare", settings=FAST),
    )
    (aa,) = manifest.aa
    assert (aa.status, aa.pairs) == ("incomplete", 12)
    assert manifest.axes[0].status == "incomplete"


def test_a_set_is_written_once_and_needs_two_judges(tmp_path: Path) -> None:
    study = write_study(tmp_path / "study", items=2)
    run = write_run(tmp_path / "runs", study, "run-a")
    one = write_judges(tmp_path / "one.toml", alpha=judge_entry("rules-a"))
    with pytest.raises(HarnessError, match="pins 1 judge"):
        run_stage([run], write_rubrics(tmp_path / "rubrics"), one, tmp_path / "set", StageOptions())
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("")
    two = write_judges(
        tmp_path / "two.toml", alpha=judge_entry("rules-a"), beta=judge_entry("rules-b")
    )
    with pytest.raises(HarnessError, match="is not empty"):
        run_stage([run], tmp_path / "rubrics", two, tmp_path / "full", StageOptions())


def test_outcomes_are_keyed_by_run_arm_item_turn_and_metric_once_the_seal_is_opened(
    honest: tuple[Path, JudgmentSet, Path],
) -> None:
    out, _, seal_path = honest
    outcomes = read_outcomes(out, seal_path)
    assert outcomes.axes == {"better_reply": "passed", "grounded": "passed"}
    keys = [(o.run, o.arm, o.item, o.turn, o.metric) for o in outcomes.flags]
    assert len(keys) == len(set(keys)) == 2 * 30  # two arms x ten items x three turns
    assert {o.arm for o in outcomes.flags} == {"bare", "retrieval"}
    # The stub replies echo the user: nothing is flagged, and both judges agree on each.
    assert all(o.value == 0.0 and o.agreed and o.votes == 2 for o in outcomes.flags)
    assert len(outcomes.pairs) == 30
    assert all(
        (p.arm_a, p.arm_b, p.value, p.votes) == ("bare", "retrieval", 0.5, 4)
        for p in outcomes.pairs
    )
    assert outcomes.set_aside == []


def test_a_reply_that_invents_a_fact_is_flagged_and_loses_its_pair(tmp_path: Path) -> None:
    def replier(arm: str, item: str, turn: int, said: str) -> str:
        wrong = arm == "retrieval" and (item, turn) == ("item0", 0)
        return "Noted: My sister lives in Madrid." if wrong else f"Noted: {said}"

    study = write_study(tmp_path / "study", items=4)
    run = write_run(tmp_path / "runs", study, "run-a", replier)
    judges = write_judges(
        tmp_path / "judges.toml", alpha=judge_entry("rules-a"), beta=judge_entry("rules-b")
    )
    run_stage(
        [run], write_rubrics(tmp_path / "rubrics"), judges, tmp_path / "set",
        StageOptions(seed=8, settings=FAST),
    )  # fmt: skip
    outcomes = read_outcomes(tmp_path / "set", tmp_path / "set.seal.json")
    assert outcomes.axes["grounded"] == "passed"
    flagged = {(o.arm, o.item, o.turn) for o in outcomes.flags if o.value == 1.0}
    assert flagged == {("retrieval", "item0", 0)}
    (lost,) = [p for p in outcomes.pairs if p.value != 0.5]
    assert (lost.item, lost.turn, lost.arm_a, lost.value) == ("item0", 0, "bare", 1.0)
