"""Controls mixed into the confirmatory set: a judge that passed calibration and then stops
catching them halts its rubric once 10 have been judged below 0.90."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from random import Random

from harness.judge.judges import load_judges
from harness.judge.plan import Planner, Settings
from harness.judge.rubrics import load_rubrics
from harness.judge.runs import load_source
from harness.judge.send import RunningDetection
from harness.judge.stage import StageOptions, run_stage
from harness.judge.verify import verify_set
from rundir.judgments.files import read_tasks, read_votes
from rundir.judgments.records import JudgmentTask
from tests.judge.runs import judge_entry, write_judges, write_rubrics, write_run, write_study

DRIFT = str(Path(__file__).with_name("drifting_judge.py"))


def _control(n: int) -> JudgmentTask:
    return JudgmentTask(
        id=f"c{n}",
        judgment=f"control:r:confirmatory:{n}",
        rubric="r",
        kind="flag",
        judge="gamma",
        role="control",
        phase="confirmatory",
        labels=["X*wrong_fact"],
        strength="strong",
        expect="FLAG",
        prompt_sha256="0" * 64,
    )


def test_running_detection_halts_only_after_ten_controls_below_the_bar() -> None:
    running = RunningDetection()
    for n in range(9):
        running.record(_control(n), "OK" if n < 2 else "FLAG")  # 7 of 9: too few to halt
    assert running.halted == {}
    running.record(_control(9), "FLAG")  # 8 of 10 = 0.80 < 0.90
    assert running.halted == {
        "r": "halted: judge gamma caught 8 of 10 mixed-in controls of r (0.80 < 0.90)"
    }
    steady = RunningDetection()
    for n in range(10):
        steady.record(_control(n), "OK" if n == 0 else "FLAG")  # 9 of 10 = 0.90: holds
    assert steady.halted == {}


def test_a_judge_that_drifts_after_calibration_is_halted_by_the_mixed_in_controls(
    tmp_path: Path,
) -> None:
    study = write_study(tmp_path / "study", items=10)
    run = write_run(tmp_path / "runs", study, "run-a")
    rubrics = write_rubrics(tmp_path / "rubrics", pairwise=False)
    # A third of the confirmatory set as controls: 20 per judge, enough for the rule to act.
    settings = Settings(controls_per_kind=4, mix_share=0.34)
    probe = write_judges(
        tmp_path / "probe.toml", alpha=judge_entry("rules-a"), gamma=judge_entry("rules-g")
    )
    # The planner draws from the same seeded stream as the stage does after loading the runs.
    rng = Random(9)
    source = load_source([run], rng, None, None)
    tasks = Planner(source, load_judges(probe), rng, settings).plan(load_rubrics(rubrics))
    calibration = sum(1 for p in tasks if p.task.judge == "gamma" and p.task.phase == "calibration")
    entry = judge_entry("rules-g")
    entry["command"] = [
        sys.executable,
        "-S",
        DRIFT,
        str(tmp_path / "count"),
        str(calibration),
        *entry["command"][3:],
    ]  # type: ignore[index]
    judges = write_judges(tmp_path / "judges.toml", alpha=judge_entry("rules-a"), gamma=entry)
    manifest = run_stage(
        [run], rubrics, judges, tmp_path / "set", StageOptions(seed=9, settings=settings, jobs=1)
    )
    assert [b.status for b in manifest.calibration if b.judge == "gamma"] == ["passed"] * 4
    (halt,) = manifest.halts
    # Blind, it still "catches" the clean controls mixed in (they must not be flagged).
    assert re.fullmatch(
        r"halted: judge gamma caught [0-8] of 10 mixed-in controls of grounded \(0\.\d\d < 0\.90\)",
        halt,
    )
    (axis,) = manifest.axes
    assert axis.status == "no verdict" and halt in axis.reasons
    # Once halted, the rest of the rubric's prompts were never sent, and their judgments are
    # set aside by name.
    sent = {v.task for v in read_votes(tmp_path / "set")}
    unsent = [
        t for t in read_tasks(tmp_path / "set") if t.phase == "confirmatory" and t.id not in sent
    ]
    assert unsent and manifest.set_aside
    assert all(s.judgment.startswith("flag:grounded:") for s in manifest.set_aside)
    # The halt is recomputed from votes.jsonl in its order: the watch saw them in that order.
    assert verify_set(tmp_path / "set") == []
