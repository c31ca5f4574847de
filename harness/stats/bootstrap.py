"""Percentile intervals from a bootstrap over clusters, paired between arms.

Turns of one item (or items of one declared group) are not independent: resampling single turns
would pretend there is more evidence than there is and give intervals too narrow. So whole
clusters are drawn with replacement and every unit of a drawn cluster comes along. For a paired
comparison each unit carries both arms' values, so drawing a cluster draws both arms' values
together: the interval of the mean of a - b over the resampled units is the paired difference.

The statistic of one resample is the mean over the units of the drawn clusters (a ratio estimator
when clusters differ in size), the same statistic as the point estimate over the data as given.
The interval is the percentile interval (Efron's, as in scipy.stats.bootstrap(method="percentile"),
https://docs.scipy.org/doc/scipy/reference/generated/scipy.stats.bootstrap.html), with numpy's
default linear quantile. Cluster labels are ordered by their text before drawing, so the same
records in another order give the same interval, and a fixed seed gives the same bytes.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

import numpy as np
from numpy.typing import ArrayLike
from pydantic import BaseModel, ConfigDict

#: Indices drawn per block: 10,000 resamples of 10,000 clusters stay within a few tens of MB.
_BLOCK_ELEMENTS = 2_000_000


class Interval(BaseModel):
    """A point estimate with its bootstrap percentile interval and what it took to get it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    estimate: float
    low: float
    high: float
    resamples: int
    seed: int
    confidence: float
    clusters: int  # how many clusters were resampled
    n: int  # how many units (turns, items) they hold

    def contains(self, value: float) -> bool:
        return self.low <= value <= self.high

    @property
    def excludes_zero(self) -> bool:
        return not self.contains(0.0)


def mean_interval(
    values: ArrayLike,
    clusters: Sequence[Hashable] | None = None,
    resamples: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
) -> Interval:
    """The mean of `values` with its interval, resampling whole clusters (`clusters[i]` is the
    label of `values[i]`; None: every value is its own cluster)."""
    data = _as_vector(values, "values")
    return _cluster_bootstrap(data, clusters, resamples, seed, confidence)


def paired_cluster_bootstrap(
    a: ArrayLike,
    b: ArrayLike,
    clusters: Sequence[Hashable] | None = None,
    resamples: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
) -> Interval:
    """The mean difference a - b over paired units (`a[i]` and `b[i]` measured on the same unit,
    in cluster `clusters[i]`) with its interval; pairs and clusters stay whole in every resample."""
    first, second = _as_vector(a, "a"), _as_vector(b, "b")
    if first.shape != second.shape:
        raise ValueError(
            f"paired arms need one value each per unit: a has {first.size}, b has {second.size}"
        )
    return _cluster_bootstrap(first - second, clusters, resamples, seed, confidence)


def _as_vector(values: ArrayLike, name: str) -> np.ndarray:
    data = np.asarray(values, dtype=np.float64)
    if data.ndim != 1 or data.size == 0:
        raise ValueError(f"{name} must be a non-empty list of numbers")
    if not np.all(np.isfinite(data)):
        # A NaN would silently poison every resample; the caller must drop or score the unit.
        raise ValueError(f"{name} holds a NaN or infinity: drop or score that unit first")
    return data


def _cluster_codes(clusters: Sequence[Hashable] | None, n: int) -> tuple[np.ndarray, int]:
    if clusters is None:
        return np.arange(n), n
    labels = [str(label) for label in clusters]
    if len(labels) != n:
        raise ValueError(f"clusters must label every unit: {len(labels)} labels for {n} units")
    names = sorted(set(labels))
    code = {name: i for i, name in enumerate(names)}
    return np.fromiter((code[label] for label in labels), dtype=np.intp, count=n), len(names)


def _cluster_bootstrap(
    values: np.ndarray,
    clusters: Sequence[Hashable] | None,
    resamples: int,
    seed: int,
    confidence: float,
) -> Interval:
    if resamples < 1:
        raise ValueError("resamples must be at least 1")
    if not 0 < confidence < 1:
        raise ValueError("confidence must be between 0 and 1, e.g. 0.95")
    codes, k = _cluster_codes(clusters, values.size)
    sums = np.bincount(codes, weights=values, minlength=k)
    counts = np.bincount(codes, minlength=k).astype(np.float64)
    # The exactly rounded sum: the point estimate must not hang on how the values group into
    # clusters or in what order they are added (numpy's pairwise sum and Python 3.12+'s
    # compensated sum() differ in the last bit), so one recomputed from the records matches it.
    estimate = math.fsum(values.tolist()) / values.size

    rng = np.random.default_rng(seed)
    stats = np.empty(resamples)
    block = max(1, _BLOCK_ELEMENTS // k)
    for start in range(0, resamples, block):
        rows = min(block, resamples - start)
        drawn = rng.integers(0, k, size=(rows, k))
        stats[start : start + rows] = sums[drawn].sum(axis=1) / counts[drawn].sum(axis=1)

    alpha = 1 - confidence
    low, high = np.quantile(stats, [alpha / 2, 1 - alpha / 2])
    return Interval(
        estimate=estimate,
        low=float(low),
        high=float(high),
        resamples=resamples,
        seed=seed,
        confidence=confidence,
        clusters=k,
        n=int(values.size),
    )
