"""Latency percentiles: numpy's linear percentile over completed turns, with cut turns ranked as
+infinity (above every completed turn) and a percentile that reaches one reported as censored."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness.report.figures.latency import latency, percentile


@pytest.mark.parametrize("q", [0.0, 0.25, 0.5, 0.95, 0.99, 1.0])
def test_without_cut_turns_it_is_numpys_percentile(q: float) -> None:
    values = sorted(np.random.default_rng(7).gamma(2.0, 0.7, size=37).tolist())
    assert percentile(values, q) == pytest.approx(float(np.percentile(values, q * 100)))


def test_a_cut_turn_ranks_above_the_slowest_completed_turn() -> None:
    # 19 completed turns and one cut: the cut turn is the slowest, so p95 interpolates into it.
    figures = latency([1.0] * 19, cut=1, deadline_s=30.0)
    assert figures.p95_censored and figures.p95_s == 30.0
    assert not figures.p50_censored and figures.p50_s == 1.0
    assert (figures.n, figures.cut) == (20, 1)
    # numpy, given +inf for the cut turn, agrees that the p95 is unbounded.
    assert math.isinf(np.percentile([1.0] * 19 + [math.inf], 95, method="higher"))


def test_all_cut_and_no_turns() -> None:
    assert latency([], cut=3, deadline_s=5.0).p50_censored
    empty = latency([], cut=0, deadline_s=5.0)
    assert empty.p50_s is None and empty.n == 0
