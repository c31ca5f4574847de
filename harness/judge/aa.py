"""The A/A control: an arm against a second sample of itself, judged like any pair.

Each A/A pair's score is the first sample's share of its four votes (two judges x two orders: a
win 1, a tie 1/2, a loss 0); the win rate is their mean, with a 95% bootstrap interval over items
(turns of one item are not independent). Judges blind to arms must find the two samples equal:
the control passes when the interval contains 0.50. Fewer pairs with full vote sets than needed
(30) is incomplete, never passed.
"""

from __future__ import annotations

from collections import defaultdict

from harness.stats import mean_interval
from rundir.judgments import AAResult, JudgmentTask, Vote

AA_PAIRS = 30


def aa_control(
    rubric: str,
    tasks: list[JudgmentTask],
    votes: dict[str, Vote],
    first_code: str | None,
    *,
    needed: int = AA_PAIRS,
    resamples: int = 10_000,
    seed: int = 0,
) -> AAResult:
    if first_code is None:
        return AAResult(
            rubric=rubric,
            arm_code="",
            pairs=0,
            needed=needed,
            win_rate=None,
            low=None,
            high=None,
            status="not run",
            detail="no A/A sample given (--aa-run, --aa-arm)",
        )
    by_judgment: dict[str, list[JudgmentTask]] = defaultdict(list)
    for t in tasks:
        if t.rubric == rubric and t.role == "aa":
            by_judgment[t.judgment].append(t)
    scores, items = [], []
    for group in by_judgment.values():
        if not all(t.id in votes for t in group):
            continue  # not a full vote set: set aside, not scored
        points = []
        for t in group:
            verdict = votes[t.id].verdict
            points.append(
                0.5
                if verdict == "TIE"
                else float(t.labels[int(str(verdict)[-1]) - 1] == first_code)
            )
        scores.append(sum(points) / len(points))
        items.append(group[0].item or "")
    if len(scores) < needed:
        return AAResult(
            rubric=rubric,
            arm_code=first_code,
            pairs=len(scores),
            needed=needed,
            win_rate=sum(scores) / len(scores) if scores else None,
            low=None,
            high=None,
            status="incomplete",
            detail=f"{len(scores)} A/A pairs with full vote sets, {needed} needed",
        )
    interval = mean_interval(scores, clusters=items, resamples=resamples, seed=seed)
    passed = interval.contains(0.5)
    detail = (
        f"win rate {interval.estimate:.3f} (95% interval {interval.low:.3f} to "
        f"{interval.high:.3f}) {'contains' if passed else 'excludes'} 0.50"
    )
    return AAResult(
        rubric=rubric,
        arm_code=first_code,
        pairs=len(scores),
        needed=needed,
        win_rate=interval.estimate,
        low=interval.low,
        high=interval.high,
        status="passed" if passed else "failed",
        detail=detail,
    )
