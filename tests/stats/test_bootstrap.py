"""The paired cluster bootstrap: hand-computed cases, scipy's bootstrap, clusters kept whole."""

from __future__ import annotations

import time

import numpy as np
import pytest
from scipy import stats

from harness.stats import Interval, mean_interval, paired_cluster_bootstrap


def test_identical_arms_give_exactly_zero() -> None:
    scores = [0.0, 1.0, 1.0, 0.5, 0.25, 1.0]
    items = ["i1", "i1", "i2", "i3", "i3", "i4"]
    interval = paired_cluster_bootstrap(scores, scores, clusters=items)
    assert (interval.estimate, interval.low, interval.high) == (0.0, 0.0, 0.0)
    assert interval.contains(0.0) and not interval.excludes_zero
    assert (interval.clusters, interval.n, interval.resamples, interval.seed) == (4, 6, 10_000, 0)


def test_one_cluster_has_no_spread() -> None:
    # Every resample draws the only cluster, so every resample is the data itself.
    interval = paired_cluster_bootstrap([1.0, 0.0, 1.0], [0.0, 0.0, 0.0], clusters=["a"] * 3)
    assert interval.estimate == interval.low == interval.high == pytest.approx(2 / 3)
    assert interval.clusters == 1


def test_two_clusters_by_hand() -> None:
    # Cluster x = {1, 1} and y = {0}: a resample draws xx, xy/yx or yy, so the resampled mean is
    # 1, 2/3 or 0, with chances 1/4, 1/2, 1/4. The 95% percentile interval spans [0, 1].
    interval = mean_interval([1.0, 1.0, 0.0], clusters=["x", "x", "y"], resamples=4000, seed=3)
    assert interval.estimate == pytest.approx(2 / 3)
    assert (interval.low, interval.high) == (0.0, 1.0)
    # The middle of the distribution is the mixed draw.
    assert mean_interval([1.0, 1.0, 0.0], ["x", "x", "y"], confidence=0.4).low == pytest.approx(
        2 / 3
    )


def test_clusters_keep_pairs_and_turns_together() -> None:
    # Ten items of ten turns each; within an item every turn has the same difference. Clustered
    # by item there are ten independent values, not a hundred: the interval must be as wide as
    # bootstrapping the ten item means, and much wider than pretending turns were independent.
    rng = np.random.default_rng(7)
    per_item = rng.normal(0.2, 1.0, size=10)
    diff = np.repeat(per_item, 10)
    items = [f"item-{i}" for i in range(10) for _ in range(10)]
    a, b = diff + 5.0, np.full(100, 5.0)
    clustered = paired_cluster_bootstrap(a, b, clusters=items, seed=1)
    by_item = mean_interval(per_item, seed=1)
    naive = paired_cluster_bootstrap(a, b, clusters=None, seed=1)
    assert clustered.clusters == 10 and naive.clusters == 100
    assert clustered.estimate == pytest.approx(by_item.estimate)
    width = clustered.high - clustered.low
    assert width == pytest.approx(by_item.high - by_item.low, rel=0.1)
    assert width > 2 * (naive.high - naive.low)


def test_unclustered_matches_scipy_percentile_bootstrap() -> None:
    rng = np.random.default_rng(11)
    a = rng.normal(1.0, 2.0, size=60)
    b = a - rng.normal(0.3, 1.0, size=60)
    ours = paired_cluster_bootstrap(a, b, clusters=None, resamples=20_000, seed=5)
    reference = stats.bootstrap(
        (a, b),
        lambda x, y, axis=-1: np.mean(x - y, axis=axis),
        paired=True,
        n_resamples=20_000,
        method="percentile",
        confidence_level=0.95,
        random_state=np.random.default_rng(9),
    )
    assert ours.estimate == pytest.approx(float(np.mean(a - b)))
    # Same distribution, different draws: equal within Monte-Carlo error (each end is off by
    # about 0.03 standard errors at 20,000 resamples).
    se = float(reference.standard_error)
    assert ours.low == pytest.approx(reference.confidence_interval.low, abs=0.1 * se)
    assert ours.high == pytest.approx(reference.confidence_interval.high, abs=0.1 * se)


def test_a_fixed_seed_gives_the_same_bytes_and_order_does_not_matter() -> None:
    rng = np.random.default_rng(2)
    a, b = rng.random(200), rng.random(200)
    clusters = [f"g{i % 17}" for i in range(200)]
    first = paired_cluster_bootstrap(a, b, clusters, seed=42)
    again = paired_cluster_bootstrap(a, b, clusters, seed=42)
    assert first.model_dump_json() == again.model_dump_json()
    other_seed = paired_cluster_bootstrap(a, b, clusters, seed=43)
    assert other_seed.low != first.low
    # The same records listed in another order resample the same clusters the same way.
    order = rng.permutation(200)
    shuffled = paired_cluster_bootstrap(a[order], b[order], [clusters[i] for i in order], seed=42)
    assert shuffled.low == pytest.approx(first.low, abs=1e-12)
    assert shuffled.high == pytest.approx(first.high, abs=1e-12)
    assert Interval.model_validate_json(first.model_dump_json()) == first


def test_ten_thousand_resamples_of_a_large_study_are_fast() -> None:
    rng = np.random.default_rng(0)
    n = 20_000
    clusters = [f"item-{i // 4}" for i in range(n)]  # 5,000 items of 4 turns
    start = time.process_time()  # CPU time: a loaded machine does not stretch it
    interval = paired_cluster_bootstrap(rng.random(n), rng.random(n), clusters)
    elapsed = time.process_time() - start
    assert interval.clusters == 5_000 and interval.resamples == 10_000
    assert elapsed < 10, f"{elapsed:.1f}s"


@pytest.mark.parametrize(
    ("a", "b", "clusters", "message"),
    [
        ([1.0, 2.0], [1.0], None, "one value each per unit"),
        ([1.0, float("nan")], [1.0, 1.0], None, "NaN"),
        ([], [], None, "non-empty"),
        ([1.0, 2.0], [1.0, 2.0], ["x"], "label every unit"),
    ],
)
def test_bad_inputs_are_refused_with_what_to_do(
    a: list[float], b: list[float], clusters: list[str] | None, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        paired_cluster_bootstrap(a, b, clusters)


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="confidence"):
        mean_interval([1.0, 2.0], confidence=95)
    with pytest.raises(ValueError, match="resamples"):
        mean_interval([1.0, 2.0], resamples=0)
