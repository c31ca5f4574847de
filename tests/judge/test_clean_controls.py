"""Controls a judge cannot tell from the real thing: clean controls only from a declared clean set
confirmed by two readers, padding controls with their own bar, grading controls shaped like the
arms' answers, and enough mixed-in controls for the running watch to decide at the example's
size. Each fault is shown by a real judge process exhibiting it, beside honest stub judges."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from random import Random

import pytest
import tomli_w

from harness.errors import HarnessError
from harness.judge.judges import load_judges
from harness.judge.plan import Planner, Settings
from harness.judge.planting import mixed_counts, shaped, watch_needs
from harness.judge.rubrics import load_rubric, load_rubrics
from harness.judge.runs import load_source
from harness.judge.stage import StageOptions, run_stage
from harness.judge.stub_judge import problems
from harness.study import load_study
from rundir.judgments.files import read_tasks
from rundir.judgments.records import JudgmentSet
from tests.datasets.fixtures import longmemeval_entry
from tests.judge.runs import (
    FLAG_RUBRIC,
    judge_entry,
    write_judges,
    write_rubrics,
    write_run,
    write_study,
)
from tests.study_builder import StudyBuilder

HERE = Path(__file__).resolve().parent
FAULTY = str(HERE / "faulty_judge.py")
DRIFT = str(HERE / "drifting_judge.py")
EXAMPLE = HERE.parents[1] / "examples" / "judged"
FAST = Settings(controls_per_kind=4)


def _faulty(fault: str, model: str) -> dict[str, object]:
    entry = judge_entry(model)
    entry["command"] = [sys.executable, "-S", FAULTY, fault, *entry["command"][3:]]  # type: ignore[index]
    return entry


def _bars(manifest: JudgmentSet) -> dict[tuple[str, str, str], object]:
    return {(b.rubric, b.judge, b.bar): b for b in [*manifest.calibration, *manifest.running]}


# --- the declared clean set ----------------------------------------------------------------------


def _flag_rubric(folder: Path, lines: list[dict[str, object]] | None, clean: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    data = dict(FLAG_RUBRIC) if clean else {k: v for k, v in FLAG_RUBRIC.items() if k != "clean"}
    (folder / "grounded.toml").write_text(tomli_w.dumps(data))
    if lines is not None:
        text = "".join(json.dumps(line) + "\n" for line in lines)
        (folder / "grounded.clean.jsonl").write_text(text)
    return folder / "grounded.toml"


def test_a_flag_rubric_must_declare_a_clean_set_confirmed_by_two_readers(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match="a flag rubric needs clean = FILE"):
        load_rubric(_flag_rubric(tmp_path / "none", None, clean=False))
    with pytest.raises(HarnessError, match="cannot read its clean set"):
        load_rubric(_flag_rubric(tmp_path / "missing", None))
    one = {"messages": ["I keep bees."], "reply": "Noted: you keep bees.", "readers": ["ana"]}
    with pytest.raises(HarnessError, match="line 1: readers: 1 distinct reader"):
        load_rubric(_flag_rubric(tmp_path / "one", [one]))
    same = {**one, "readers": ["ana", " Ana "]}
    with pytest.raises(HarnessError, match="1 distinct reader"):
        load_rubric(_flag_rubric(tmp_path / "same", [same]))
    both = {**one, "readers": ["ana", "ben"], "item": "x", "turn": 0}
    with pytest.raises(HarnessError, match="not both"):
        load_rubric(_flag_rubric(tmp_path / "both", [both]))
    good = load_rubric(_flag_rubric(tmp_path / "good", [{**one, "readers": ["ana", "ben"]}]))
    assert good.clean is not None and len(good.clean.entries) == 1


def test_a_clean_item_naming_a_turn_the_runs_lack_is_refused(tmp_path: Path) -> None:
    study = write_study(tmp_path / "study", items=3)
    run = write_run(tmp_path / "runs", study, "run-a")
    entry = {"item": "lisbon", "turn": 0, "reply": "Noted.", "readers": ["ana", "ben"]}
    rubric = load_rubric(_flag_rubric(tmp_path / "rubrics", [entry]))
    judges = load_judges(
        write_judges(tmp_path / "j.toml", alpha=judge_entry("a"), beta=judge_entry("b"))
    )
    rng = Random(1)
    planner = Planner(load_source([run], rng, None, None), judges, rng, FAST)
    with pytest.raises(HarnessError, match="item 'lisbon' turn 0 is not a turn of the judged runs"):
        planner.plan([rubric])


def test_the_examples_clean_set_names_its_turns_and_reads_clean() -> None:
    """The example's second reader: every line is a turn of its study, grounded, acknowledging."""
    (rubric,) = [r for r in load_rubrics(EXAMPLE / "rubrics") if r.kind == "flag"]
    assert rubric.clean is not None
    study = load_study(EXAMPLE / "study.toml")
    said = {
        (item.id, n): " ".join(f"{t.user} {t.addon or ''}" for t in item.turns[: n + 1])
        for item in study.items
        for n in range(len(item.turns))
    }
    assert {(e.item, e.turn) for e in rubric.clean.entries} == set(said)
    for e in rubric.clean.entries:
        assert problems(e.reply, said[(e.item or "", e.turn or 0)], pairwise=False) == []


def _violating(arm: str, item: str, turn: int, said: str) -> str:
    # retrieval invents a fact on every turn: it really violates the rubric.
    base = f"Noted: {said}" if turn < 2 else f"You told me: {said}"
    return base if arm == "bare" else f"{base} You also keep three parrots."


def test_honest_judges_pass_calibration_when_an_arm_really_violates_the_rubric(
    tmp_path: Path,
) -> None:
    study = write_study(tmp_path / "study", items=10)
    run = write_run(tmp_path / "runs", study, "run-a", _violating)
    judges = write_judges(
        tmp_path / "judges.toml", alpha=judge_entry("rules-a"), beta=judge_entry("rules-b")
    )
    out = tmp_path / "set"
    manifest = run_stage(
        [run],
        write_rubrics(tmp_path / "rubrics", pairwise=False),
        judges,
        out,
        StageOptions(seed=3, settings=FAST),
    )
    bars = _bars(manifest)
    for judge in ("alpha", "beta"):
        clean = bars[("grounded", judge, "clean flagged")]
        assert clean.value == 0.0 and clean.status == "passed"  # type: ignore[attr-defined]
    assert {a.rubric: a.status for a in manifest.axes} == {"grounded": "passed"}
    # No clean control shows an arm's reply: they are the clean set's, parrots nowhere.
    tasks = read_tasks(out)
    for t in tasks:
        if t.control in ("clean", "padded"):
            prompt = (out / "prompts" / f"{t.id}.txt").read_text()
            assert "parrots" not in prompt


# --- padding controls ----------------------------------------------------------------------------


def test_a_judge_that_breaks_ties_toward_the_longer_reply_fails_the_padding_bar(
    tmp_path: Path,
) -> None:
    study = write_study(tmp_path / "study", items=10)
    run = write_run(tmp_path / "runs", study, "run-a")
    judges = write_judges(
        tmp_path / "judges.toml", alpha=judge_entry("rules-a"), gamma=_faulty("longer", "r-g")
    )
    manifest = run_stage(
        [run],
        write_rubrics(tmp_path / "rubrics", flag=False),
        judges,
        tmp_path / "set",
        StageOptions(seed=2, settings=FAST, aa_pairs=0),
    )
    bars = _bars(manifest)
    honest = bars[("better_reply", "alpha", "padding read the same")]
    faulty = bars[("better_reply", "gamma", "padding read the same")]
    assert honest.status == "passed" and honest.value == 1.0  # type: ignore[attr-defined]
    assert faulty.status == "failed" and faulty.value == 0.0  # type: ignore[attr-defined]
    # Its other calibration bars pass: only the padding controls tell its fault.
    assert bars[("better_reply", "gamma", "pairwise detection")].status == "passed"  # type: ignore[attr-defined]
    (axis,) = manifest.axes
    assert axis.status == "no verdict"
    assert any(r.startswith("judge gamma failed padding read the same: 0.00") for r in axis.reasons)


def test_a_padded_clean_reply_reads_the_same_to_an_honest_judge(tmp_path: Path) -> None:
    study = write_study(tmp_path / "study", items=4)
    run = write_run(tmp_path / "runs", study, "run-a")
    judges = write_judges(
        tmp_path / "judges.toml", alpha=judge_entry("rules-a"), beta=judge_entry("rules-b")
    )
    out = tmp_path / "set"
    manifest = run_stage(
        [run],
        write_rubrics(tmp_path / "rubrics", pairwise=False),
        judges,
        out,
        StageOptions(seed=4, settings=FAST),
    )
    bar = _bars(manifest)[("grounded", "alpha", "padding read the same")]
    assert bar.status == "passed" and bar.held == 4  # type: ignore[attr-defined]
    padded = [t for t in read_tasks(out) if t.control == "padded" and t.role == "control"]
    assert padded and all(t.expect == "OK" for t in padded)


# --- grading controls shaped like the answers ---------------------------------------------------


def _memory_study(folder: Path, questions: int) -> Path:
    folder.mkdir(parents=True)
    entries = [longmemeval_entry(n, "single-session-user") for n in range(questions)]
    (folder / "lme.json").write_text(json.dumps(entries))
    builder = StudyBuilder(name="t1").arm("right", "python -m x").arm("wrong", "python -m y")
    return builder.set(items={"format": "longmemeval", "path": "lme.json"}).write(folder)


def _rubric(folder: Path, grades: str) -> Path:
    folder.mkdir(parents=True)
    rubric = {"schema": 1, "name": "t1_correct", "version": "1", "kind": "qa", "grades": grades}
    (folder / "t1.toml").write_text(tomli_w.dumps(rubric))
    return folder


def test_a_shaped_control_is_a_sentence_of_the_answers_length() -> None:
    rng = Random(0)
    lengths = [12, 14, 15]
    for _ in range(20):
        text = shaped("Lisbon", lengths, rng, None)
        assert "Lisbon" in text and len(text.split()) >= 12
    # A planted wrong answer that would hold every word of the gold is not planted.
    assert shaped("the blue car", [1], Random(0), "blue car") == ""


def test_a_judge_saying_yes_to_any_sentence_fails_grading_calibration(tmp_path: Path) -> None:
    study = _memory_study(tmp_path / "study", 12)
    questions = {i.id: i.memory.question for i in load_study(study).items if i.memory}

    def answer(arm: str, item: str, turn: int, said: str) -> str:
        q = questions[item]
        return f"I think your cousin's dog is called {q.answer}." if arm == "right" else "Rex."

    run = write_run(tmp_path / "runs", study, "run-t1", answer, arms=("right", "wrong"))
    judges = write_judges(
        tmp_path / "judges.toml",
        alpha=judge_entry("rules-a"),
        gamma=_faulty("accept-long", "r-g"),
    )
    out = tmp_path / "set"
    manifest = run_stage(
        [run],
        _rubric(tmp_path / "rubrics", "questions"),
        judges,
        out,
        StageOptions(seed=5, settings=FAST),
    )
    bars = _bars(manifest)
    assert bars[("t1_correct", "alpha", "strong detection")].status == "passed"  # type: ignore[attr-defined]
    faulty = bars[("t1_correct", "gamma", "strong detection")]
    assert faulty.status == "failed" and faulty.value == 0.0  # type: ignore[attr-defined]
    (axis,) = manifest.axes
    assert axis.status == "no verdict"
    # Every control answer is a sentence of four or more words, never a bare gold string.
    for t in read_tasks(out):
        if t.role == "control":
            prompt = (out / "prompts" / f"{t.id}.txt").read_text()
            (response,) = [ln for ln in prompt.splitlines() if ln.startswith("Model Response: ")]
            assert len(response.split()) - 2 >= 4


# --- mixed-in controls sized for the watch --------------------------------------------------------


def test_mixed_in_controls_are_a_tenth_and_never_fewer_than_the_watch_needs(
    tmp_path: Path,
) -> None:
    assert watch_needs(0.90, 10) == 10 and watch_needs(0.95, 10) == 20
    rubrics = {r.kind: r for r in load_rubrics(write_rubrics(tmp_path / "rubrics"))}
    flag, pairwise = rubrics["flag"], rubrics["pairwise"]
    assert sum(mixed_counts(flag, 60, 0.10, 10)) == 10  # a tenth is 6: too few
    assert sum(mixed_counts(flag, 300, 0.10, 10)) == 30  # a tenth is 30: enough
    counts = mixed_counts(pairwise, 30, 0.10, 10)  # near-identical pairs catch nothing
    assert sum(counts) - counts[4] >= 10
    assert sum(mixed_counts(flag, 0, 0.10, 10)) == 0


def test_too_few_plantable_controls_leave_the_axis_without_a_verdict_saying_why(
    tmp_path: Path,
) -> None:
    """Three questions give at most three controls of each kind (one per question): six mixed-in
    controls, fewer than the watch needs, so the axis cannot pass however well judges grade."""
    study = _memory_study(tmp_path / "study", 3)
    questions = {i.id: i.memory.question for i in load_study(study).items if i.memory}

    def answer(arm: str, item: str, turn: int, said: str) -> str:
        return f"It is {questions[item].answer}." if arm == "right" else "It is Rex."

    run = write_run(tmp_path / "runs", study, "run-t1", answer, arms=("right", "wrong"))
    judges = write_judges(
        tmp_path / "judges.toml", alpha=judge_entry("rules-a"), beta=judge_entry("rules-b")
    )
    manifest = run_stage(
        [run],
        _rubric(tmp_path / "rubrics", "questions"),
        judges,
        tmp_path / "set",
        StageOptions(seed=6, settings=FAST),
    )
    running = _bars(manifest)[("t1_correct", "alpha", "running detection")]
    assert running.status == "failed" and running.value == 1.0  # type: ignore[attr-defined]
    (axis,) = manifest.axes
    assert axis.status == "no verdict"
    assert (
        "judge alpha: only 6 mixed-in control(s) with a verdict to catch could be planted, and "
        "the running watch needs 10 to decide" in " ".join(axis.reasons)
    )


def test_a_judge_blind_after_calibration_is_caught_at_the_examples_size(tmp_path: Path) -> None:
    """Ten items, two arms, three turns, the default tenth: before, 3 mixed-in pairs, too few
    for the watch; now enough, and a judge answering TIE to everything after calibration is
    halted, while the honest pair passes (test_stage)."""
    study = write_study(tmp_path / "study", items=10)
    run = write_run(tmp_path / "runs", study, "run-a")
    rubrics = write_rubrics(tmp_path / "rubrics", flag=False)
    probe = write_judges(
        tmp_path / "probe.toml", alpha=judge_entry("rules-a"), gamma=judge_entry("rules-g")
    )
    rng = Random(9)
    source = load_source([run], rng, None, None)
    planned = Planner(source, load_judges(probe), rng, FAST).plan(load_rubrics(rubrics))
    calibration = sum(
        1 for p in planned if p.task.judge == "gamma" and p.task.phase == "calibration"
    )
    entry = judge_entry("rules-g")
    entry["command"] = [
        sys.executable, "-S", DRIFT, str(tmp_path / "count"), str(calibration),
        *entry["command"][3:],  # type: ignore[index]
    ]  # fmt: skip
    judges = write_judges(tmp_path / "judges.toml", alpha=judge_entry("rules-a"), gamma=entry)
    manifest = run_stage(
        [run], rubrics, judges, tmp_path / "set", StageOptions(seed=9, settings=FAST, jobs=1)
    )
    bars = _bars(manifest)
    assert all(
        b.status == "passed"  # type: ignore[attr-defined]
        for (rubric, judge, name), b in bars.items()
        if judge == "gamma" and name != "running detection"
    )
    running = bars[("better_reply", "gamma", "running detection")]
    assert running.status == "failed"  # type: ignore[attr-defined]
    (axis,) = manifest.axes
    assert axis.status == "no verdict"
    assert any(r.startswith("halted: judge gamma caught") for r in axis.reasons), axis.reasons
