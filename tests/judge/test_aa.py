"""The A/A control's arithmetic: each pair's score from its four votes, the win rate, its interval
over items, and the rule (passes when the interval holds 0.50; short of pairs is incomplete)."""

from __future__ import annotations

import pytest

from harness.judge.aa import aa_control
from harness.stats import mean_interval
from rundir.judgments.records import JudgmentTask, Vote

FIRST, SECOND = "AAAA", "BBBB"


def _pairs(
    verdicts: list[list[str]], missing: int | None = None
) -> tuple[list[JudgmentTask], dict[str, Vote]]:
    """One A/A judgment per entry, its four votes in the given order (first, swapped) x 2."""
    tasks, votes = [], {}
    for n, four in enumerate(verdicts):
        for k, verdict in enumerate(four):
            labels = [FIRST, SECOND] if k % 2 == 0 else [SECOND, FIRST]
            task = JudgmentTask(
                id=f"t{n}.{k}",
                judgment=f"aa:r:i{n // 3}:{n % 3}",
                rubric="r",
                kind="pairwise",
                judge=f"j{k // 2}",
                role="aa",
                phase="confirmatory",
                item=f"i{n // 3}",
                turn=n % 3,
                labels=labels,
                order="first" if k % 2 == 0 else "swapped",
                prompt_sha256="0" * 64,
            )
            tasks.append(task)
            if not (missing == n and k == 3):
                votes[task.id] = Vote(
                    task=task.id,
                    judge=task.judge,
                    attempt=1,
                    prompt_sha256="0" * 64,
                    reply_file="r",
                    reply_sha256="0",
                    status="accepted",
                    verdict=verdict,
                    elapsed_s=0.0,
                )
    return tasks, votes


def test_scores_count_wins_ties_and_losses_of_the_first_sample_across_orders() -> None:
    # "Reply 1" in the first order is the first sample; in the swapped order it is the second.
    pattern = [
        ["Reply 1", "Reply 2", "Reply 1", "Reply 2"],  # first sample wins every vote: 1
        ["Reply 1", "Reply 1", "TIE", "TIE"],  # a position-biased judge and ties: 1/2
        ["Reply 2", "Reply 1", "TIE", "Reply 1"],  # loses 3 votes, one tie: 1/8
    ]
    tasks, votes = _pairs(pattern * 10)
    result = aa_control("r", tasks, votes, FIRST, resamples=3000, seed=4)
    scores = [1.0, 0.5, 0.125] * 10
    expected = mean_interval(
        scores, clusters=[f"i{n // 3}" for n in range(30)], resamples=3000, seed=4
    )
    assert result.pairs == 30
    assert result.win_rate == pytest.approx(sum(scores) / 30)
    assert (result.low, result.high) == (expected.low, expected.high)
    assert result.status == ("passed" if expected.contains(0.5) else "failed")


def test_a_sample_that_always_wins_fails_and_ties_pass() -> None:
    tasks, votes = _pairs([["Reply 1", "Reply 2"] * 2] * 30)
    assert aa_control("r", tasks, votes, FIRST, resamples=1000).status == "failed"
    tasks, votes = _pairs([["TIE"] * 4] * 30)
    result = aa_control("r", tasks, votes, FIRST, resamples=1000)
    assert (result.status, result.win_rate, result.low, result.high) == ("passed", 0.5, 0.5, 0.5)


def test_a_pair_without_its_full_vote_set_is_not_scored_and_29_pairs_are_incomplete() -> None:
    tasks, votes = _pairs([["TIE"] * 4] * 30, missing=7)
    result = aa_control("r", tasks, votes, FIRST)
    assert (result.status, result.pairs) == ("incomplete", 29)
    assert "29 A/A pairs with full vote sets, 30 needed" in result.detail
    assert aa_control("r", tasks, votes, None).status == "not run"
