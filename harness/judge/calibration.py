"""The bars a judge must clear, per rubric, read from the tasks and their accepted votes.

Calibration (planted controls, before any confirmatory judgment), per judge:
- flags: strong controls flagged >= 0.90, mild >= 0.75, clean replies (from the declared clean
  set) flagged <= 0.15, and padded clean replies read the same (not flagged) >= 0.85;
- pairwise: the original beats its perturbed copy >= 0.90 of the time, a reply against its
  padded copy is a tie >= 0.80 of the time (a judge breaking ties toward length fails), and a
  control judgment gets the same verdict in both orders (the same reply, or a tie) >= 0.80;
- grading (qa): an answer that is another question's gold graded wrong >= 0.90 ("strong
  detection"), the gold itself graded wrong <= 0.15 ("clean flagged"): "no" is its flag;
and between every two judges, Cohen's kappa on the same prompts: >= 0.60 on flags, >= 0.40 on
pairwise. Stability: a task asked twice gets the same verdict, flags >= 0.90, pairwise >= 0.80.
Running detection (the controls mixed into the confirmatory set, per judge): failed when the
watch halted the rubric, and failed too when fewer were held than the watch needs to decide
(`planting.watch_needs`): a watch that cannot decide does not pass a judge.

A bar counts what it held (the items planned) against what was answered (every vote it needs
accepted). A judge that falls below a bar fails it; one that answered fewer than were held has
not passed it either: the bar is incomplete, however good the answered part looks.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from itertools import combinations
from typing import Literal

from harness.judge.agreement import clopper_pearson, cohens_kappa
from rundir.judgments import BarResult, JudgmentTask, Vote

FLAG_BARS: dict[str, tuple[Literal[">=", "<="], float]] = {
    "strong": (">=", 0.90),
    "mild": (">=", 0.75),
    "clean": ("<=", 0.15),
}
PAIRWISE_DETECTION = 0.90
# Padding controls: the verdict a padded copy must get (flag: not flagged, like the clean reply
# it pads; pairwise: a tie with its unpadded self), as a share of those planted.
PADDING = {"flag": 0.85, "pairwise": 0.80}
PADDING_BAR = "padding read the same"
BOTH_ORDERS = 0.80
KAPPA = {"flag": 0.60, "pairwise": 0.40, "qa": 0.60}
STABILITY = {"flag": 0.90, "pairwise": 0.80, "qa": 0.90}
# The verdict that says a control was caught as faulty, per kind of one-reply rubric.
FLAGGED = {"flag": "FLAG", "qa": "no"}
QA_STRENGTHS = ("strong", "clean")  # a grading rubric plants no mild control


def bar(
    rubric: str,
    judge: str,
    name: str,
    hits: int,
    answered: int,
    held: int,
    op: Literal[">=", "<="],
    threshold: float,
    interval: bool = True,
) -> BarResult:
    value = hits / answered if answered else None
    if value is not None and not (value >= threshold if op == ">=" else value <= threshold):
        status: Literal["passed", "failed", "incomplete"] = "failed"
    elif answered < held or value is None:
        status = "incomplete"
    else:
        status = "passed"
    return BarResult(
        rubric=rubric,
        judge=judge,
        bar=name,
        value=value,
        threshold=threshold,
        op=op,
        held=held,
        answered=answered,
        status=status,
        interval=clopper_pearson(hits, answered) if interval and answered else None,
    )


def resolved(task: JudgmentTask, verdict: str) -> str:
    """A pairwise verdict as the label it chose ("TIE" stays), so both orders compare."""
    if verdict.startswith("Reply "):
        return task.labels[int(verdict[-1]) - 1]
    return verdict


def calibration_bars(
    rubric: str, kind: str, tasks: Iterable[JudgmentTask], votes: dict[str, Vote], judges: list[str]
) -> list[BarResult]:
    controls = [
        t
        for t in tasks
        if t.rubric == rubric
        and t.role == "control"
        and t.phase == "calibration"
        and t.reask_of is None  # a re-ask (third pass) is read beside its task, never as another
    ]
    out: list[BarResult] = []
    for judge in judges:
        mine = [t for t in controls if t.judge == judge]
        if kind in FLAGGED:
            for strength, (op, threshold) in FLAG_BARS.items():
                if kind == "qa" and strength not in QA_STRENGTHS:
                    continue
                held = [t for t in mine if t.strength == strength and t.control != "padded"]
                got = [votes[t.id].verdict for t in held if t.id in votes]
                name = "clean flagged" if strength == "clean" else f"{strength} detection"
                out.append(
                    bar(
                        rubric,
                        judge,
                        name,
                        sum(v == FLAGGED[kind] for v in got),
                        len(got),
                        len(held),
                        op,
                        threshold,
                    )
                )
            if kind == "flag":
                out.append(padding_bar(rubric, kind, judge, mine, votes))
            continue
        out.append(padding_bar(rubric, kind, judge, mine, votes))
        held = [t for t in mine if t.strength == "pairwise"]
        caught = [votes[t.id].verdict == t.expect for t in held if t.id in votes]
        out.append(
            bar(
                rubric,
                judge,
                "pairwise detection",
                sum(caught),
                len(caught),
                len(held),
                ">=",
                PAIRWISE_DETECTION,
            )
        )
        by_judgment: dict[str, list[JudgmentTask]] = defaultdict(list)
        for t in mine:
            by_judgment[t.judgment].append(t)
        same = answered = 0
        for pair in by_judgment.values():
            if len(pair) == 2 and all(t.id in votes for t in pair):
                answered += 1
                a, b = (resolved(t, votes[t.id].verdict or "") for t in pair)
                same += a == b
        out.append(
            bar(
                rubric,
                judge,
                "same verdict both orders",
                same,
                answered,
                len(by_judgment),
                ">=",
                BOTH_ORDERS,
            )
        )
    out.extend(kappa_bars(rubric, kind, controls, votes, judges))
    return out


def padding_bar(
    rubric: str, kind: str, judge: str, mine: list[JudgmentTask], votes: dict[str, Vote]
) -> BarResult:
    held = [t for t in mine if t.control == "padded"]
    read = [votes[t.id].verdict == t.expect for t in held if t.id in votes]
    return bar(rubric, judge, PADDING_BAR, sum(read), len(read), len(held), ">=", PADDING[kind])


def running_bars(
    rubric: str,
    tasks: list[JudgmentTask],
    votes: dict[str, Vote],
    judges: list[str],
    halted: dict[str, str],
    threshold: float,
    needed: int,
) -> list[BarResult]:
    """The mixed-in controls' detection per judge: failed when the watch halted on this judge,
    or when fewer controls (judgments with a verdict to catch) were held than it needs."""
    out = []
    for judge in judges:
        held = [
            t
            for t in tasks
            if t.rubric == rubric
            and t.judge == judge
            and t.role == "control"
            and t.phase == "confirmatory"
            and t.expect is not None
        ]
        got = [votes[t.id].verdict == t.expect for t in held if t.id in votes]
        status: Literal["passed", "failed", "incomplete"] = "passed"
        if halted.get(rubric, "").startswith(f"halted: judge {judge} "):
            status = "failed"
        elif len({t.judgment for t in held}) < needed:
            status = "failed"  # the watch could never have decided: fail closed
        elif len(got) < len(held):
            status = "incomplete"
        out.append(
            BarResult(
                rubric=rubric,
                judge=judge,
                bar="running detection",
                value=sum(got) / len(got) if got else None,
                threshold=threshold,
                op=">=",
                held=len(held),
                answered=len(got),
                status=status,
            )
        )
    return out


def watch_short(b: BarResult, tasks: list[JudgmentTask], needed: int) -> str | None:
    """Why a running-detection bar failed for want of controls, or None when it did not."""
    if b.bar != "running detection" or b.status != "failed":
        return None
    judgments = {
        t.judgment
        for t in tasks
        if t.rubric == b.rubric
        and t.judge == b.judge
        and t.role == "control"
        and t.phase == "confirmatory"
        and t.expect is not None
    }
    if len(judgments) >= needed:
        return None
    return (
        f"judge {b.judge}: only {len(judgments)} mixed-in control(s) with a verdict to catch "
        f"could be planted, and the running watch needs {needed} to decide (add clean items or "
        "replies controls can be made from)"
    )


def kappa_bars(
    rubric: str, kind: str, tasks: list[JudgmentTask], votes: dict[str, Vote], judges: list[str]
) -> list[BarResult]:
    # The same prompt given to two judges: (judgment, order) names it across judges.
    by_prompt: dict[tuple[str, str | None], dict[str, JudgmentTask]] = defaultdict(dict)
    for t in tasks:
        by_prompt[(t.judgment, t.order)][t.judge] = t
    out = []
    for a, b in combinations(judges, 2):
        shared = [p for p in by_prompt.values() if a in p and b in p]
        both = [p for p in shared if p[a].id in votes and p[b].id in votes]
        kappa = cohens_kappa(
            [votes[p[a].id].verdict or "" for p in both],
            [votes[p[b].id].verdict or "" for p in both],
        )
        threshold = KAPPA[kind]
        status: Literal["passed", "failed", "incomplete"]
        if not both:
            status = "incomplete"  # nothing both judges answered: a shortfall, not a reading
        elif kappa is None or kappa < threshold:
            status = "failed"  # an undefined kappa (one category throughout) shows no agreement
        elif len(both) < len(shared):
            status = "incomplete"
        else:
            status = "passed"
        out.append(
            BarResult(
                rubric=rubric,
                judge=f"{a}+{b}",
                bar="kappa",
                value=kappa,
                threshold=threshold,
                op=">=",
                held=len(shared),
                answered=len(both),
                status=status,
            )
        )
    return out


def stability_bars(
    rubric: str,
    kind: str,
    tasks: Iterable[JudgmentTask],
    votes: dict[str, Vote],
    judges: list[str],
    sent: set[str],
) -> list[BarResult]:
    """Each repeat against the task it repeats; only repeats that were sent are held."""
    tasks = [t for t in tasks if t.rubric == rubric]
    out = []
    for judge in judges:
        repeats = [
            t for t in tasks if t.judge == judge and t.repeat_of is not None and t.id in sent
        ]
        both = [t for t in repeats if t.id in votes and t.repeat_of in votes]
        same = sum(votes[t.id].verdict == votes[t.repeat_of or ""].verdict for t in both)
        out.append(
            bar(rubric, judge, "stability", same, len(both), len(repeats), ">=", STABILITY[kind])
        )
    return out
