"""The third pass: when a rubric's two judges each pass their own calibration bars but agree less
than the agreement bar (Cohen's kappa on the same controls), the third judge judges.toml pins
(`third = true`) is calibrated on the same controls; if it passes every bar of its own, it joins
the rubric's vote set (three votes per prompt: the outcome is the share of all of them, the
majority's side), and the pass is recorded as resolved in the set (`ThirdPass`). With no third
judge pinned the pass is "not run", and a third judge that fails a bar "failed": the axis gets no
verdict either way. A judge that fails its own bars is never rescued by a third one.

The re-ask form (judges.toml's top-level `third = "reask"`, no third judge): the calibration
prompts on which the two judges' accepted verdicts differ are asked again of both judges, each as
a fresh prompt file with the same text (the same codes), a task of its own (`reask_of`) whose
votes sit beside the first ones. Agreement is measured again with each re-asked vote in place of
its first one; the pass is resolved when kappa then clears the bar, failed (the axis gets no
verdict) when it is still below. Only the disagreements are re-asked, so a judge pair that agrees
by chance on a control is not given a second chance there: the re-ask can only move kappa by what
the judges change their minds on, which is what the pass is meant to find out.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from random import Random
from typing import Literal

from harness.judge.calibration import calibration_bars, kappa_bars
from harness.judge.judges import Judge
from harness.judge.rubrics import Rubric
from harness.judge.send import send
from rundir.judgments import PROMPTS_DIR, BarResult, JudgmentTask, ThirdPass, Vote, VoteLog


@dataclass(frozen=True)
class Asking:
    """What sending needs: the set, the judges by name, the vote log, and the stage's settings."""

    out: Path
    judges: dict[str, Judge]
    log: VoteLog
    attempts: int
    jobs: int
    rng: Random

    def send(self, tasks: list[JudgmentTask]) -> dict[str, Vote]:
        """`tasks` sent in a seeded shuffled order (send.py: a control is not told apart by when
        it comes)."""
        return send(
            self.out,
            self.rng.sample(tasks, len(tasks)),
            self.judges,
            self.log,
            attempts=self.attempts,
            jobs=self.jobs,
        )


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
    votes |= asking.send(asked)
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


def run_reask(
    rubric: Rubric,
    short: list[BarResult],
    judges: list[str],
    tasks: list[JudgmentTask],
    votes: dict[str, Vote],
    sent: set[str],
    asking: Asking,
) -> tuple[list[BarResult], ThirdPass, list[JudgmentTask]]:
    """Re-ask both judges the calibration prompts they disagreed on (the new tasks are returned,
    their votes land in `votes`, their ids in `sent`); resolved when kappa then clears the bar."""
    trigger = [
        f"{b.judge} kappa {'none' if b.value is None else f'{b.value:.2f}'} < {b.threshold:.2f}"
        for b in short
    ]
    controls = [
        t
        for t in tasks
        if t.rubric == rubric.name
        and t.role == "control"
        and t.phase == "calibration"
        and t.reask_of is None
        and t.judge in judges
    ]
    # The prompts as the kappa bar pairs them: (judgment, order) names one prompt across judges.
    by_prompt: dict[tuple[str, str | None], dict[str, JudgmentTask]] = {}
    for t in controls:
        by_prompt.setdefault((t.judgment, t.order), {})[t.judge] = t
    disagreeing = [
        t
        for pair in by_prompt.values()
        if len(pair) == len(judges)
        and all(t.id in votes for t in pair.values())
        and len({votes[t.id].verdict for t in pair.values()}) > 1
        for t in pair.values()
    ]
    again = []
    for t in disagreeing:
        fresh = t.model_copy(update={"id": f"{t.id}-reask", "reask_of": t.id, "repeat_of": None})
        text = (asking.out / PROMPTS_DIR / f"{t.id}.txt").read_bytes()
        (asking.out / PROMPTS_DIR / f"{fresh.id}.txt").write_bytes(text)
        again.append(fresh)
    sent |= {t.id for t in again}
    votes |= asking.send(again)
    # Each re-asked vote in place of its first one (a re-ask left unanswered keeps the first).
    merged = dict(votes)
    for t in again:
        if t.id in votes and t.reask_of is not None:
            merged[t.reask_of] = votes[t.id]
    remeasured = [
        b.model_copy(update={"bar": "kappa re-asked"})
        for b in kappa_bars(rubric.name, rubric.kind, controls, merged, judges)
    ]
    below = [b for b in remeasured if b.status != "passed"]
    values = ", ".join(
        f"{b.judge} {'none' if b.value is None else f'{b.value:.2f}'}" for b in remeasured
    )
    asked = len(disagreeing) // max(1, len(judges))
    detail = f"re-asked {asked} disagreeing prompt(s) of both judges: kappa {values}"
    status: Literal["resolved", "failed"] = "failed" if below else "resolved"
    detail += " still below the bar" if below else " clears the bar"
    return (
        remeasured,
        ThirdPass(
            rubric=rubric.name,
            trigger=trigger,
            judge=None,
            status=status,
            detail=detail,
            form="reask",
            reasked=[t.id for t in disagreeing],
        ),
        again,
    )
