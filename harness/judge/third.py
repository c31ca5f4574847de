"""The third pass: when a rubric's two judges each pass their own calibration bars but agree less
than the agreement bar (Cohen's kappa on the same controls), the third judge judges.toml pins
(`third = true`) is calibrated on the same controls; if it passes every bar of its own, it joins
the rubric's vote set (three votes per prompt: the outcome is the share of all of them, the
majority's side), and the pass is recorded as resolved in the set (`ThirdPass`). With no third
judge pinned the pass is "not run", and a third judge that fails a bar "failed": the axis gets no
verdict either way. A judge that fails its own bars is never rescued by a third one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from random import Random
from typing import Literal

from harness.judge.calibration import calibration_bars
from harness.judge.judges import Judge
from harness.judge.rubrics import Rubric
from harness.judge.send import send
from rundir.judgments import BarResult, JudgmentTask, ThirdPass, Vote, VoteLog


@dataclass(frozen=True)
class Asking:
    """What sending needs: the set, the judges by name, the vote log, and the stage's settings."""

    out: Path
    judges: dict[str, Judge]
    log: VoteLog
    attempts: int
    jobs: int
    rng: Random


def run_third_pass(
    rubric: Rubric,
    short: list[BarResult],
    third: Judge | None,
    tasks: list[JudgmentTask],
    votes: dict[str, Vote],
    sent: set[str],
    asking: Asking,
) -> tuple[list[BarResult], ThirdPass]:
    """Calibrate the third judge on `rubric`'s controls (its votes land in `votes`, the tasks
    asked in `sent`); resolved when it passes every bar of its own."""
    trigger = [
        f"{b.judge} kappa {'none' if b.value is None else f'{b.value:.2f}'} < {b.threshold:.2f}"
        for b in short
    ]
    if third is None:
        detail = "no third judge is pinned (third = true in the judges file)"
        return [], ThirdPass(
            rubric=rubric.name, trigger=trigger, judge=None, status="not run", detail=detail
        )
    asked = [
        t
        for t in tasks
        if t.phase == "calibration" and t.rubric == rubric.name and t.judge == third.name
    ]
    sent |= {t.id for t in asked}
    votes |= send(
        asking.out,
        asking.rng.sample(asked, len(asked)),
        asking.judges,
        asking.log,
        attempts=asking.attempts,
        jobs=asking.jobs,
    )
    own = calibration_bars(rubric.name, rubric.kind, tasks, votes, [third.name])
    failed = [f"{b.bar} {b.status}" for b in own if b.status != "passed"]
    status: Literal["resolved", "failed"] = "failed" if failed else "resolved"
    detail = (
        f"judge {third.name} " + ", ".join(failed)
        if failed
        else f"judge {third.name} passed every bar and joins the vote set"
    )
    return own, ThirdPass(
        rubric=rubric.name, trigger=trigger, judge=third.name, status=status, detail=detail
    )
