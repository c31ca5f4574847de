"""The judging flow after planning, and every field of the manifest it derives from the votes.

Calibration (each rubric's judges on its planted controls), the third pass where two judges
agree less than the bar, the confirmatory set with its running watch (a rubric halts when its
mixed-in controls stop being caught), then stability, the running bars, the A/A control, the
judgments set aside and each axis's status.

One function, `judge_flow`, serves both sides of a judgment set: `harness judge` runs it with a
sender that asks the judges (stage.py, `LiveSender`), and a re-check (recheck.py: `harness judge
--verify`, `harness report`) with one that replays votes.jsonl in its order. A manifest whose
derived fields are not what this flow gives from its tasks, votes and replies is refused.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, cast

from harness.judge.aa import aa_control
from harness.judge.calibration import calibration_bars, stability_bars, watch_short
from harness.judge.calibration import running_bars as mixed_in_bars
from harness.judge.judges import Judge
from harness.judge.planting import watch_needs
from harness.judge.rubrics import Rubric
from harness.judge.send import RUNNING_MIN_CONTROLS, RunningDetection, send
from harness.judge.third import Asking, run_reask, run_third_pass
from rundir.judgments import (
    AAResult,
    AxisStatus,
    BarResult,
    JudgmentTask,
    Kind,
    SetAside,
    ThirdPass,
    Vote,
)


class RubricLike(Protocol):
    """What the flow reads of a rubric: a loaded one (stage) or the manifest's record (re-check)."""

    @property
    def name(self) -> str: ...

    @property
    def kind(self) -> Kind: ...


class Sender(Protocol):
    def send(
        self, tasks: list[JudgmentTask], running: RunningDetection | None = None
    ) -> dict[str, Vote]:
        """The accepted vote of each task of `tasks` that got one."""
        ...

    def asking(self) -> Asking:
        """How a third pass sends (third.py)."""
        ...


@dataclass(frozen=True)
class LiveSender:
    """Asks the judges, tasks in a seeded shuffled order (a control is not told by when it
    comes)."""

    how: Asking

    def send(
        self, tasks: list[JudgmentTask], running: RunningDetection | None = None
    ) -> dict[str, Vote]:
        a = self.how
        return send(
            a.out,
            a.rng.sample(tasks, len(tasks)),
            a.judges,
            a.log,
            attempts=a.attempts,
            jobs=a.jobs,
            running=running,
        )

    def asking(self) -> Asking:
        return self.how


@dataclass
class Flow:
    """What the flow found: the manifest's derived fields, and the tasks and votes behind them."""

    tasks: list[JudgmentTask]  # the planned tasks and any third pass's re-asks
    votes: dict[str, Vote] = field(default_factory=dict)
    calibration: list[BarResult] = field(default_factory=list)
    third_pass: list[ThirdPass] = field(default_factory=list)
    running: list[BarResult] = field(default_factory=list)
    stability: list[BarResult] = field(default_factory=list)
    aa: list[AAResult] = field(default_factory=list)
    set_aside: list[SetAside] = field(default_factory=list)
    axes: list[AxisStatus] = field(default_factory=list)
    halts: list[str] = field(default_factory=list)


# The manifest's fields the flow derives, in the order a re-check compares them.
DERIVED = ("calibration", "third_pass", "running", "stability", "aa", "set_aside", "halts", "axes")


def judge_flow(
    rubrics: Sequence[RubricLike],
    planned: list[JudgmentTask],
    names: list[str],
    third: Judge | None,
    form: Literal["judge", "reask"],
    sender: Sender,
    *,
    aa_first: str | None,
    aa_pairs: int,
    resamples: int,
    seed: int,
) -> Flow:
    """Judge `planned` (`names`: the two judges; `third`: a third judge, if pinned) and derive
    every field; `seed` is the A/A bootstrap's."""
    tasks = list(planned)
    flow = Flow(tasks=tasks)
    sent: set[str] = set()
    passes = flow.third_pass
    calibration = [t for t in tasks if t.phase == "calibration"]
    asked = [t for t in calibration if t.judge in names]
    sent |= {t.id for t in asked}
    votes = flow.votes
    votes |= sender.send(asked)
    reasked: list[JudgmentTask] = []
    ready: set[str] = set()
    for rubric in rubrics:
        mine = calibration_bars(rubric.name, rubric.kind, tasks, votes, names)
        flow.calibration += mine
        own_ok = all(b.status == "passed" for b in mine if b.bar != "kappa")
        short = [b for b in mine if b.bar == "kappa" and b.status == "failed"]
        if short and own_ok:
            # Two judges that each pass their own bars but agree less than the bar: a third
            # judge is calibrated on the same controls, and if it passes, joins them.
            # (third.py reads a rubric's name and kind only.)
            as_rubric = cast(Rubric, rubric)
            if form == "reask":
                third_bars, third_pass, again = run_reask(
                    as_rubric, short, names, tasks, votes, sent, sender.asking()
                )
                reasked += again
            else:
                third_bars, third_pass = run_third_pass(
                    as_rubric, short, third, tasks, votes, sent, sender.asking()
                )
            flow.calibration += third_bars
            passes.append(third_pass)
        if own_ok and (not short or passes[-1].status == "resolved"):
            ready.add(rubric.name)
    # The re-asks are tasks of the set like any other (their prompts are on disk).
    tasks += reasked
    voters = {
        r.name: names
        + [p.judge for p in passes if p.rubric == r.name and p.status == "resolved" and p.judge]
        for r in rubrics
    }
    confirmatory = [
        t
        for t in tasks
        if t.phase == "confirmatory" and t.rubric in ready and t.judge in voters[t.rubric]
    ]
    running = RunningDetection()
    votes |= sender.send(confirmatory, running)
    sent |= {t.id for t in confirmatory if t.rubric not in running.halted}
    flow.halts = sorted(running.halted.values())
    _derive(flow, rubrics, voters, ready, sent, running, aa_first, aa_pairs, resamples, seed)
    return flow


def _derive(
    flow: Flow,
    rubrics: Sequence[RubricLike],
    voters: dict[str, list[str]],
    ready: set[str],
    sent: set[str],
    running: RunningDetection,
    aa_first: str | None,
    aa_pairs: int,
    resamples: int,
    seed: int,
) -> None:
    votes = flow.votes
    # Only the votes a rubric's judgments need: a third judge's unsent prompts are not missing.
    voting = [t for t in flow.tasks if t.judge in voters[t.rubric]]
    notes: dict[str, list[str]] = {}  # why a running watch could not decide, per rubric
    for rubric in rubrics:
        who = voters[rubric.name]
        flow.stability += stability_bars(rubric.name, rubric.kind, voting, votes, who, sent)
        if rubric.name in ready:  # an unsent rubric had no controls mixed into anything
            needed = watch_needs(running.bar, RUNNING_MIN_CONTROLS)
            mine = mixed_in_bars(
                rubric.name, voting, votes, who, running.halted, running.bar, needed
            )
            flow.running += mine
            notes[rubric.name] = [n for b in mine if (n := watch_short(b, voting, needed))]
        if rubric.kind == "pairwise":
            flow.aa.append(
                aa_control(
                    rubric.name,
                    voting,
                    votes,
                    aa_first,
                    needed=aa_pairs,
                    resamples=resamples,
                    seed=seed,
                )
            )
        if rubric.name in ready:
            flow.set_aside += set_aside(rubric.name, voting, votes)
    for rubric in rubrics:
        flow.axes.append(
            axis(
                rubric.name,
                [*flow.calibration, *flow.stability, *flow.running],
                flow.aa,
                flow.set_aside,
                running,
                rubric.name in ready,
                [p for p in flow.third_pass if p.rubric == rubric.name],
                notes.get(rubric.name, []),
            )
        )


def set_aside(rubric: str, tasks: list[JudgmentTask], votes: dict[str, Vote]) -> list[SetAside]:
    """The judgments of `rubric` without their full vote set, and the votes each lacks."""
    groups: dict[str, list[JudgmentTask]] = defaultdict(list)
    for t in tasks:
        if t.rubric == rubric and t.role in ("confirmatory", "aa"):
            groups[t.judgment].append(t)
    out = []
    for name, group in sorted(groups.items()):
        missing = [f"{t.judge}/{t.order or 'flag'}" for t in group if t.id not in votes]
        if missing:
            out.append(SetAside(judgment=name, rubric=rubric, missing=missing))
    return out


def axis(
    rubric: str,
    bars: list[BarResult],
    aa: list[AAResult],
    set_aside: list[SetAside],
    running: RunningDetection,
    calibrated: bool,
    passes: list[ThirdPass],
    notes: list[str],
) -> AxisStatus:
    """An axis is "passed" only when every bar of every judge passed and every judgment has its
    full vote set; any bar failed, or a halt, makes it "no verdict"; a shortfall (a bar answered
    on fewer items than held, a judgment set aside, an A/A control short of pairs) makes it
    "incomplete"."""
    failed, short = list(notes), []
    resolved = any(p.status == "resolved" for p in passes)
    for p in passes:
        if p.status != "resolved":
            failed.append(f"third pass {p.status}: {p.detail}")
    for b in bars:
        if b.rubric != rubric:
            continue
        if resolved and b.bar == "kappa" and b.status == "failed":
            continue  # the third pass answered it (the bar stays in the set, as measured)
        value = "none" if b.value is None else f"{b.value:.2f}"
        if b.status == "failed":
            failed.append(
                f"judge {b.judge} failed {b.bar}: {value} "
                f"(bar {b.op} {b.threshold:.2f}, {b.answered} answered)"
            )
        elif b.status == "incomplete":
            short.append(f"judge {b.judge} {b.bar}: {b.answered} answered of {b.held} held")
    if rubric in running.halted:
        failed.append(running.halted[rubric])
    for result in aa:
        if result.rubric == rubric:
            if result.status == "failed":
                failed.append(f"A/A control failed: {result.detail}")
            elif result.status in ("incomplete", "not run"):
                short.append(f"A/A control {result.status}: {result.detail}")
    mine = [s for s in set_aside if s.rubric == rubric]
    if mine:
        short.append(f"{len(mine)} judgment(s) set aside without their full vote set")
    if not calibrated:
        short.append("calibration did not pass: no confirmatory judgment was sent")
    if failed:
        return AxisStatus(rubric=rubric, status="no verdict", reasons=failed + short)
    if short:
        return AxisStatus(rubric=rubric, status="incomplete", reasons=short)
    return AxisStatus(rubric=rubric, status="passed", reasons=[])
