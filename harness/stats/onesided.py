"""One-sided confirmatory statistics: a cluster bootstrap's replicates, one-sided p-values read
from them, the minimum detectable effect, and a length-controlled estimate.

- `cluster_replicates`: the same draw as harness/stats/bootstrap.py (whole clusters with
  replacement, the mean over the drawn units, cluster labels ordered by their text so the order of
  the records does not matter), returning every replicate so tests of a null value can be read off
  the same distribution the interval comes from.
- `two_level_replicates`: the two-level draw the design asks for on T2 and T3: cards with
  replacement, then, within each drawn card, its scripts (clusters) with replacement.
- `p_at_most(reps, value)`: the bootstrap p-value of H0 "effect <= value" against "effect >
  value", (1 + #{rep <= value}) / (1 + R) (Davison and Hinkley 1997, eq. 4.11): it rejects at
  alpha exactly when the percentile interval's one-sided lower bound at alpha lies above value.
- `mde`: the smallest true effect a one-sided z test at `alpha` detects with `power` on `n`
  clusters whose means vary with standard deviation `sd`: (z_{1-alpha} + z_{power}) sd / sqrt(n)
  (statsmodels' NormalIndPower with ratio=0, the one-sample case, gives the same).
- `length_controlled`: the intercept of the least-squares line of the effect on the log ratio of
  the two replies' lengths: the effect at equal length, its replicates by the same cluster draw.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

import numpy as np
from scipy import stats


def _codes(clusters: Sequence[Hashable], n: int) -> tuple[np.ndarray, int]:
    labels = [str(c) for c in clusters]
    if len(labels) != n:
        raise ValueError(f"clusters must label every unit: {len(labels)} labels for {n} units")
    names = sorted(set(labels))
    index = {name: i for i, name in enumerate(names)}
    return np.fromiter((index[x] for x in labels), dtype=np.intp, count=n), len(names)


def cluster_replicates(
    values: Sequence[float], clusters: Sequence[Hashable], resamples: int, seed: int
) -> tuple[float, np.ndarray]:
    """(the mean over all units, the mean of each of `resamples` cluster resamples)."""
    data = np.asarray(values, dtype=np.float64)
    if data.ndim != 1 or data.size == 0 or not np.all(np.isfinite(data)):
        raise ValueError("values must be a non-empty list of finite numbers")
    codes, k = _codes(clusters, data.size)
    sums = np.bincount(codes, weights=data, minlength=k)
    counts = np.bincount(codes, minlength=k).astype(np.float64)
    rng = np.random.default_rng(seed)
    drawn = rng.integers(0, k, size=(resamples, k))
    reps = sums[drawn].sum(axis=1) / counts[drawn].sum(axis=1)
    return math.fsum(data.tolist()) / data.size, reps


def two_level_replicates(
    values: Sequence[float],
    cards: Sequence[Hashable],
    clusters: Sequence[Hashable],
    resamples: int,
    seed: int,
) -> tuple[float, np.ndarray]:
    """(the mean over all units, the mean of each of `resamples` two-level resamples): draw as
    many cards as there are, with replacement; within each drawn card, draw as many of its
    clusters as it holds, with replacement; the replicate is the mean over the drawn units."""
    data = np.asarray(values, dtype=np.float64)
    if data.ndim != 1 or data.size == 0 or not np.all(np.isfinite(data)):
        raise ValueError("values must be a non-empty list of finite numbers")
    codes, k = _codes(clusters, data.size)
    card_codes, n_cards = _codes(cards, data.size)
    sums = np.bincount(codes, weights=data, minlength=k)
    counts = np.bincount(codes, minlength=k).astype(np.float64)
    card_of = np.zeros(k, dtype=np.intp)
    card_of[codes] = card_codes
    members = [np.flatnonzero(card_of == c) for c in range(n_cards)]
    rng = np.random.default_rng(seed)
    reps = np.empty(resamples)
    for r in range(resamples):
        drawn = np.concatenate(
            [m[rng.integers(0, m.size, size=m.size)] for m in (members[c] for c in
             rng.integers(0, n_cards, size=n_cards))]
        )  # fmt: skip
        reps[r] = sums[drawn].sum() / counts[drawn].sum()
    return math.fsum(data.tolist()) / data.size, reps


def bounds(reps: np.ndarray, alpha: float) -> tuple[float, float]:
    """The one-sided percentile bounds at alpha: (alpha quantile, 1 - alpha quantile)."""
    low, high = np.quantile(reps, [alpha, 1 - alpha])
    return float(low), float(high)


def p_at_most(reps: np.ndarray, value: float) -> float:
    """p of H0 effect <= value (the alternative: effect > value)."""
    return float((1 + np.count_nonzero(reps <= value)) / (1 + reps.size))


def p_at_least(reps: np.ndarray, value: float) -> float:
    """p of H0 effect >= value (the alternative: effect < value)."""
    return float((1 + np.count_nonzero(reps >= value)) / (1 + reps.size))


def cluster_sd(values: Sequence[float], clusters: Sequence[Hashable]) -> float | None:
    """The standard deviation (n - 1) of the cluster means; None under two clusters."""
    data = np.asarray(values, dtype=np.float64)
    codes, k = _codes(clusters, data.size)
    if k < 2:
        return None
    means = np.bincount(codes, weights=data, minlength=k) / np.bincount(codes, minlength=k)
    return float(np.std(means, ddof=1))


def mde(sd: float, n: int, alpha: float, power: float) -> float:
    return float((stats.norm.ppf(1 - alpha) + stats.norm.ppf(power)) * sd / math.sqrt(n))


def length_controlled(
    effects: Sequence[float],
    log_ratio: Sequence[float],
    clusters: Sequence[Hashable],
    resamples: int,
    seed: int,
) -> tuple[float, np.ndarray] | None:
    """(the intercept, its cluster replicates); None when the lengths never differ."""
    y = np.asarray(effects, dtype=np.float64)
    x = np.asarray(log_ratio, dtype=np.float64)
    if y.size < 3 or float(np.ptp(x)) == 0.0:
        return None
    codes, k = _codes(clusters, y.size)
    members = [np.flatnonzero(codes == c) for c in range(k)]
    estimate = _intercept(x, y)
    rng = np.random.default_rng(seed)
    reps = np.empty(resamples)
    for r in range(resamples):
        rows = np.concatenate([members[c] for c in rng.integers(0, k, size=k)])
        reps[r] = _intercept(x[rows], y[rows])
    return estimate, reps


def _intercept(x: np.ndarray, y: np.ndarray) -> float:
    if float(np.ptp(x)) == 0.0:  # a resample whose lengths never differ: the plain mean
        return float(np.mean(y))
    design = np.column_stack([np.ones_like(x), x])
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    return float(coef[0])
