"""A judgment set read for analysis: the seal opened, votes turned into outcomes keyed by run,
arm, item, turn and metric, each metric's scale declared and its axis's status attached.

- a flag rubric gives one `FlagOutcome` per reply: the share of its judges' votes that flag it
  (scale "flag_share", 0..1), and whether the judges agreed;
- a pairwise rubric gives one `PairOutcome` per two arms' replies to a turn: the share of its four
  votes (two judges x two orders) that prefer `arm_a` (a tie counts 1/2; scale "win_share");
- a grading rubric (qa) gives one `GradeOutcome` per answer: the share of its judges' votes that
  grade it right (scale "correct_share"), or 1.0 with no vote for a probe answer settled by exact
  match (`method`).
Each outcome also carries `by_judge`: the same share from each judge's own votes (the design's
judged BETTER needs each judge's own mean on the candidate's side). Only judgments with their full
vote set count; the rest are listed as set aside. Controls,
repeats and the A/A pairs are the stage's own checks and are not outcomes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from rundir.judgments import (
    JudgmentSet,
    JudgmentTask,
    Seal,
    open_seal,
    read_exact,
    read_manifest,
    read_tasks,
    read_votes,
)


class FlagOutcome(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    run: str
    arm: str
    item: str
    turn: int
    metric: str
    scale: Literal["flag_share"] = "flag_share"
    value: float
    votes: int
    agreed: bool
    axis: str  # the axis's status: passed, no verdict, incomplete
    by_judge: dict[str, float] = Field(default_factory=dict)  # each judge's own share


class PairOutcome(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    run: str
    item: str
    turn: int
    metric: str
    arm_a: str
    arm_b: str
    scale: Literal["win_share"] = "win_share"
    value: float  # arm_a's share of the votes
    votes: int
    axis: str
    by_judge: dict[str, float] = Field(default_factory=dict)  # arm_a's share per judge


class GradeOutcome(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    run: str
    arm: str
    item: str
    turn: int
    metric: str
    scale: Literal["correct_share"] = "correct_share"
    value: float  # the share of votes grading the answer right
    votes: int  # 0 when exact match settled it
    method: Literal["judged", "exact_match"]
    question_type: str | None  # the LongMemEval prompt used (judged answers)
    axis: str
    by_judge: dict[str, float] = Field(default_factory=dict)  # each judge's own share


class JudgedOutcomes(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    stage: str
    axes: dict[str, str]
    flags: list[FlagOutcome]
    pairs: list[PairOutcome]
    set_aside: list[str]
    grades: list[GradeOutcome] = Field(default_factory=list)


def read_outcomes(set_dir: Path, seal_path: Path) -> JudgedOutcomes:
    manifest = read_manifest(set_dir)
    seal = open_seal(set_dir, seal_path)  # refuses a seal that is not this set's
    axes = {a.rubric: a.status for a in manifest.axes}
    accepted = {v.task: v.verdict for v in read_votes(set_dir) if v.status == "accepted"}
    grades = _exact_grades(set_dir, seal, axes)
    flags: list[FlagOutcome] = []
    pairs: list[PairOutcome] = []
    set_aside: list[str] = []
    for name, group in sorted(_confirmatory_groups(set_dir, manifest).items()):
        verdicts = [accepted.get(t.id) for t in group]
        if any(v is None for v in verdicts):
            set_aside.append(name)
            continue
        outcome = _outcome(group, [str(v) for v in verdicts], seal, axes)
        if isinstance(outcome, GradeOutcome):
            grades.append(outcome)
        elif isinstance(outcome, FlagOutcome):
            flags.append(outcome)
        else:
            pairs.append(outcome)
    grades.sort(key=lambda g: (g.metric, g.run, g.arm, g.item, g.turn))
    return JudgedOutcomes(
        stage=manifest.stage,
        axes=axes,
        flags=flags,
        pairs=pairs,
        set_aside=set_aside,
        grades=grades,
    )


def _confirmatory_groups(set_dir: Path, manifest: JudgmentSet) -> dict[str, list[JudgmentTask]]:
    """The confirmatory tasks by judgment, each from a judge that votes on its rubric."""
    groups: dict[str, list[JudgmentTask]] = defaultdict(list)
    voters = {r.name: manifest.voters(r.name) for r in manifest.rubrics}
    for task in read_tasks(set_dir):
        # A third judge's votes count only where a third pass resolved its rubric.
        if task.role == "confirmatory" and task.judge in voters.get(task.rubric, set()):
            groups[task.judgment].append(task)
    return groups


def _exact_grades(set_dir: Path, seal: Seal, axes: Mapping[str, str]) -> list[GradeOutcome]:
    """Probe answers settled by exact match: right, with no vote."""
    grades = []
    for exact in read_exact(set_dir):
        who = seal.codes[exact.label]
        grades.append(
            GradeOutcome(
                run=who.run,
                arm=who.arm,
                item=exact.item,
                turn=exact.turn,
                metric=exact.rubric,
                value=1.0,
                votes=0,
                method="exact_match",
                question_type=None,
                axis=axes.get(exact.rubric, "incomplete"),
            )
        )
    return grades


def _outcome(
    group: list[JudgmentTask], verdicts: list[str], seal: Seal, axes: Mapping[str, str]
) -> GradeOutcome | FlagOutcome | PairOutcome:
    """One judgment's full vote set as the outcome its rubric's kind gives."""
    first = group[0]
    assert first.item is not None and first.turn is not None
    axis = axes.get(first.rubric, "incomplete")
    if first.kind == "qa":
        who = seal.codes[first.labels[0]]
        return GradeOutcome(
            run=who.run,
            arm=who.arm,
            item=first.item,
            turn=first.turn,
            metric=first.rubric,
            value=sum(v == "yes" for v in verdicts) / len(verdicts),
            votes=len(verdicts),
            method="judged",
            question_type=first.question_type,
            axis=axis,
            by_judge=judge_shares(group, [float(v == "yes") for v in verdicts]),
        )
    if first.kind == "flag":
        who = seal.codes[first.labels[0]]
        share = sum(v == "FLAG" for v in verdicts) / len(verdicts)
        return FlagOutcome(
            run=who.run,
            arm=who.arm,
            item=first.item,
            turn=first.turn,
            metric=first.rubric,
            value=share,
            votes=len(verdicts),
            agreed=share in (0.0, 1.0),
            axis=axis,
            by_judge=judge_shares(group, [float(v == "FLAG") for v in verdicts]),
        )
    a, b = sorted(first.labels, key=lambda code: seal.codes[code].arm)
    points = []
    for task, verdict in zip(group, verdicts, strict=True):
        chosen = "TIE" if verdict == "TIE" else task.labels[int(verdict[-1]) - 1]
        points.append(0.5 if chosen == "TIE" else float(chosen == a))
    return PairOutcome(
        run=seal.codes[a].run,
        item=first.item,
        turn=first.turn,
        metric=first.rubric,
        arm_a=seal.codes[a].arm,
        arm_b=seal.codes[b].arm,
        value=sum(points) / len(points),
        votes=len(points),
        axis=axis,
        by_judge=judge_shares(group, points),
    )


def judge_shares(group: list[JudgmentTask], points: list[float]) -> dict[str, float]:
    """Each judge's mean of its own points (its votes in both orders, a pair's)."""
    mine: dict[str, list[float]] = defaultdict(list)
    for task, point in zip(group, points, strict=True):
        mine[task.judge].append(point)
    return {judge: sum(p) / len(p) for judge, p in sorted(mine.items())}
