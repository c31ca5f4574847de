"""The confirmatory statistics against reference implementations: the cluster bootstrap's bounds
and p-values against scipy.stats.bootstrap, the minimum detectable effect against statsmodels'
power solver, the length-controlled intercept against statsmodels' OLS."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from statsmodels.regression.linear_model import OLS
from statsmodels.stats.power import NormalIndPower
from statsmodels.tools import add_constant

from harness.stats import onesided

R = 40_000


def test_bounds_and_p_values_match_scipys_percentile_bootstrap() -> None:
    rng = np.random.default_rng(7)
    x = rng.normal(0.15, 1.0, size=60)
    estimate, reps = onesided.cluster_replicates(x, range(x.size), R, seed=3)
    reference = stats.bootstrap(
        (x,), np.mean, method="percentile", confidence_level=0.90, n_resamples=R,
        random_state=np.random.default_rng(11),
    )  # fmt: skip
    low, high = onesided.bounds(reps, 0.05)
    sd = x.std(ddof=1) / np.sqrt(x.size)
    assert estimate == pytest.approx(x.mean(), abs=1e-12)
    assert low == pytest.approx(reference.confidence_interval.low, abs=0.03 * sd)
    assert high == pytest.approx(reference.confidence_interval.high, abs=0.03 * sd)
    theirs = reference.bootstrap_distribution
    for value in (-0.1, 0.0, 0.1, 0.2):
        p_theirs = float(np.mean(theirs <= value))
        assert onesided.p_at_most(reps, value) == pytest.approx(p_theirs, abs=0.01)
        assert onesided.p_at_least(reps, value) == pytest.approx(1 - p_theirs, abs=0.01)


def test_equal_clusters_resample_as_their_means() -> None:
    # Four turns per item: the cluster bootstrap of turns is scipy's bootstrap of item means.
    rng = np.random.default_rng(5)
    means = rng.normal(0.0, 1.0, size=30)
    values = np.repeat(means, 4) + rng.normal(0, 0.5, size=120)
    items = [f"i{n // 4}" for n in range(120)]
    _, reps = onesided.cluster_replicates(values, items, R, seed=1)
    item_means = values.reshape(30, 4).mean(axis=1)
    reference = stats.bootstrap(
        (item_means,), np.mean, method="percentile", confidence_level=0.90, n_resamples=R,
        random_state=np.random.default_rng(2),
    )  # fmt: skip
    sd = item_means.std(ddof=1) / np.sqrt(30)
    low, high = onesided.bounds(reps, 0.05)
    assert low == pytest.approx(reference.confidence_interval.low, abs=0.03 * sd)
    assert high == pytest.approx(reference.confidence_interval.high, abs=0.03 * sd)
    # Resampling turns alone would have pretended to know more: a narrower interval.
    _, naive = onesided.cluster_replicates(values, range(120), R, seed=1)
    assert np.ptp(onesided.bounds(naive, 0.05)) < 0.8 * (high - low)


def test_a_test_rejects_exactly_when_the_one_sided_bound_clears_the_null() -> None:
    rng = np.random.default_rng(9)
    _, reps = onesided.cluster_replicates(rng.normal(0.2, 1, 50), range(50), 5000, seed=4)
    low, high = onesided.bounds(reps, 0.05)
    checked = 0
    for value in np.linspace(-0.4, 0.6, 41):
        if abs(low - value) > 5e-3:  # at the bound itself quantile interpolation decides
            assert (onesided.p_at_most(reps, value) < 0.05) == (low > value)
            checked += 1
        if abs(high - value) > 5e-3:
            assert (onesided.p_at_least(reps, value) < 0.05) == (high < value)
    assert checked >= 39


def test_replicates_do_not_depend_on_the_order_of_the_units() -> None:
    values = [0.0, 1.0, 0.5, 0.25, 1.0, 0.0]
    clusters = ["a", "a", "b", "b", "c", "c"]
    first = onesided.cluster_replicates(values, clusters, 500, seed=2)
    order = [5, 4, 3, 2, 1, 0]
    second = onesided.cluster_replicates(
        [values[i] for i in order], [clusters[i] for i in order], 500, seed=2
    )
    assert first[0] == second[0] and np.allclose(first[1], second[1])


@pytest.mark.parametrize(("n", "alpha", "power"), [(30, 0.05, 0.8), (200, 0.025, 0.9)])
def test_mde_matches_statsmodels_power_solver(n: int, alpha: float, power: float) -> None:
    sd = 0.37
    d = NormalIndPower().solve_power(
        effect_size=None, nobs1=n, alpha=alpha, power=power, ratio=0, alternative="larger"
    )
    assert onesided.mde(sd, n, alpha, power) == pytest.approx(d * sd, rel=1e-6)


def test_the_length_controlled_estimate_is_ols_intercept() -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(0.3, 0.2, size=40)  # log length ratios: the candidate writes longer
    y = 0.05 + 0.6 * x + rng.normal(0, 0.05, size=40)
    clusters = [f"i{n // 2}" for n in range(40)]
    found = onesided.length_controlled(y, x, clusters, 2000, seed=1)
    assert found is not None
    estimate, reps = found
    reference = OLS(y, add_constant(x)).fit()
    assert estimate == pytest.approx(reference.params[0], abs=1e-10)
    # The plain mean credits length with an effect the intercept does not.
    assert y.mean() > 0.2 and abs(estimate - 0.05) < 0.05
    low, high = onesided.bounds(reps, 0.05)
    assert low < estimate < high
    assert onesided.length_controlled(y, np.zeros(40), clusters, 100, seed=1) is None
