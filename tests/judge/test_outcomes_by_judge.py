"""Each judge's own share beside an outcome (harness/judge/outcomes.py, `by_judge`): the design's
judged BETTER needs each judge's mean on the candidate's side, so a pair's four votes are kept per
judge (both orders), not only pooled."""

from __future__ import annotations

from harness.judge.outcomes import judge_shares
from rundir.judgments.records import JudgmentTask


def task(judge: str, order: str) -> JudgmentTask:
    fields = {
        "id": f"{judge}-{order}",
        "judgment": "pair:better_reply:q1:0:a-b",
        "rubric": "better_reply",
        "kind": "pairwise",
        "judge": judge,
        "role": "confirmatory",
        "phase": "confirmatory",
        "item": "q1",
        "turn": 0,
        "labels": ["a", "b"],
        "order": order,
        "prompt_sha256": "0" * 64,
    }
    return JudgmentTask.model_validate(fields)


def test_a_pairs_votes_are_kept_per_judge() -> None:
    group = [task("alpha", "first"), task("alpha", "swapped"), task("beta", "first"),
             task("beta", "swapped")]  # fmt: skip
    # alpha prefers arm a in both orders, beta ties once and prefers b once: pooled 0.625.
    points = [1.0, 1.0, 0.5, 0.0]
    mine = judge_shares(group, points)
    assert mine == {"alpha": 1.0, "beta": 0.25}
    assert sum(mine.values()) / 2 == sum(points) / 4
