"""Kappa and the exact rate interval, checked against statsmodels' reference implementations."""

from __future__ import annotations

import random

import numpy as np
import pytest
from statsmodels.stats.inter_rater import cohens_kappa as sm_kappa
from statsmodels.stats.proportion import proportion_confint

from harness.judge.agreement import clopper_pearson, cohens_kappa


def _table(first: list[str], second: list[str]) -> np.ndarray:
    cats = sorted(set(first) | set(second))
    table = np.zeros((len(cats), len(cats)))
    for a, b in zip(first, second, strict=True):
        table[cats.index(a), cats.index(b)] += 1
    return table


@pytest.mark.parametrize("seed", range(40))
def test_kappa_matches_statsmodels(seed: int) -> None:
    rng = random.Random(seed)
    cats = ["FLAG", "OK"] if seed % 2 else ["Reply 1", "Reply 2", "TIE"]
    n = rng.randint(5, 60)
    first = [rng.choice(cats) for _ in range(n)]
    # A second judge agreeing more often than chance, so kappa spans low to high.
    agree = rng.random()
    second = [a if rng.random() < agree else rng.choice(cats) for a in first]
    ours = cohens_kappa(first, second)
    table = _table(first, second)
    if table.shape == (1, 1):
        assert ours is None
        return
    assert ours == pytest.approx(sm_kappa(table).kappa, abs=1e-12)


def test_kappa_is_undefined_when_both_judges_use_one_category() -> None:
    assert cohens_kappa(["OK"] * 9, ["OK"] * 9) is None
    assert cohens_kappa([], []) is None
    # One judge constant, the other not: defined, and no better than chance.
    assert cohens_kappa(["FLAG"] * 4, ["FLAG", "OK", "FLAG", "OK"]) == pytest.approx(0.0)
    with pytest.raises(ValueError, match="one label per item"):
        cohens_kappa(["OK"], [])


@pytest.mark.parametrize(
    ("k", "n"), [(0, 1), (0, 10), (1, 10), (7, 10), (10, 10), (29, 30), (45, 50)]
)
def test_clopper_pearson_matches_statsmodels(k: int, n: int) -> None:
    low, high = proportion_confint(k, n, alpha=0.05, method="beta")
    ours = clopper_pearson(k, n)
    assert ours == pytest.approx((low, high), abs=1e-12)


def test_a_rate_needs_a_count_within_its_total() -> None:
    for k, n in ((1, 0), (-1, 3), (4, 3)):
        with pytest.raises(ValueError):
            clopper_pearson(k, n)
