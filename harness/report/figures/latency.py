"""Latency percentiles in which a turn cut at the deadline ranks above every completed turn.

A cut turn never finished, so its true latency is unknown but at least the deadline: ranking it
by the time of its last delta (below the turns that did finish) would flatter the slow arm. It is
ranked as +infinity; a percentile whose interpolation touches a cut turn is reported as the
deadline, flagged `censored` ("at least the deadline"), never as a measured number.
"""

from __future__ import annotations

import math

from pydantic import BaseModel


class Latency(BaseModel):
    p50_s: float | None = None
    p95_s: float | None = None
    n: int = 0  # turns ranked (completed + cut)
    cut: int = 0  # of which cut at the deadline
    p99_s: float | None = None
    max_s: float | None = None  # the slowest turn; the deadline (censored) if any was cut
    p50_censored: bool = False  # p50_s is the deadline: the median turn was cut
    p95_censored: bool = False
    p99_censored: bool = False
    max_censored: bool = False


def percentile(ranked: list[float], q: float) -> float:
    """numpy's default (linear) percentile over sorted values, where a value of +inf makes the
    result +inf as soon as it takes part in the interpolation (numpy gives nan there)."""
    position = (len(ranked) - 1) * q
    low, high = math.floor(position), math.ceil(position)
    if math.isinf(ranked[high]):
        return math.inf
    return ranked[low] + (ranked[high] - ranked[low]) * (position - low)


def latency(completed: list[float], cut: int, deadline_s: float) -> Latency:
    ranked = sorted(completed) + [math.inf] * cut
    if not ranked:
        return Latency()
    p50, p95, p99 = (percentile(ranked, q) for q in (0.50, 0.95, 0.99))
    top = ranked[-1]
    return Latency(
        p50_s=round(deadline_s if math.isinf(p50) else p50, 4),
        p95_s=round(deadline_s if math.isinf(p95) else p95, 4),
        p99_s=round(deadline_s if math.isinf(p99) else p99, 4),
        max_s=round(deadline_s if math.isinf(top) else top, 4),
        n=len(ranked),
        cut=cut,
        p50_censored=math.isinf(p50),
        p95_censored=math.isinf(p95),
        p99_censored=math.isinf(p99),
        max_censored=math.isinf(top),
    )
