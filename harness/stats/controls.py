"""Controls a study's results must pass before anyone believes its differences.

- A/A: the same arm run twice as two replicates. Their paired interval must contain zero; when it
  does not, the machinery (order effects, caching between replicates, a leaky clock, a biased
  seed) manufactures differences, and so may every other comparison of the run.
- Must fail: an arm the study marks as a control that cannot do the task (a scrambled store, an
  empty memory). It must score below every real arm, and the paired interval of each real arm
  minus the control must lie wholly on the better side of zero; a control that keeps up means the
  items can be answered without the memory under test (leaked answers, an easy task) or the
  scorer rewards something else.

Each check returns a `ControlResult`: passed or not, one plain-language flag per failure, and the
intervals it rests on, for the report to render as it stands.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Literal

from numpy.typing import ArrayLike
from pydantic import BaseModel, ConfigDict

from harness.stats.bootstrap import Interval, paired_cluster_bootstrap


class Comparison(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    arm: str
    # Paired difference, oriented so that positive means `arm` did better than the control
    # (A/A: first replicate minus second).
    interval: Interval
    passed: bool


class ControlResult(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["aa", "must_fail"]
    control: str
    metric: str
    passed: bool
    flags: list[str]
    comparisons: list[Comparison]


def aa_control(
    arm: str,
    first: ArrayLike,
    second: ArrayLike,
    clusters: Sequence[Hashable] | None = None,
    *,
    metric: str = "score",
    resamples: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
) -> ControlResult:
    """Two replicates of one arm on the same units: their paired interval must contain zero."""
    interval = paired_cluster_bootstrap(first, second, clusters, resamples, seed, confidence)
    passed = interval.contains(0.0)
    flags = (
        []
        if passed
        else [
            f"A/A control failed: two replicates of {arm} differ on {metric} by "
            f"{interval.estimate:+.4g} ({confidence:.0%} interval {interval.low:+.4g} to "
            f"{interval.high:+.4g}, excluding 0); distrust this run's other differences until "
            "the cause is found"
        ]
    )
    return ControlResult(
        kind="aa",
        control=arm,
        metric=metric,
        passed=passed,
        flags=flags,
        comparisons=[Comparison(arm=arm, interval=interval, passed=passed)],
    )


def must_fail_control(
    control: str,
    control_values: ArrayLike,
    arms: Mapping[str, ArrayLike],
    clusters: Sequence[Hashable] | None = None,
    *,
    metric: str = "score",
    higher_is_better: bool = True,
    resamples: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
) -> ControlResult:
    """The control arm must score worse than every real arm, each interval clear of zero."""
    if not arms:
        raise ValueError(
            f"the must-fail control {control!r} needs at least one real arm to lose to"
        )
    if control in arms:
        raise ValueError(f"{control!r} is both the control and a real arm")
    comparisons, flags = [], []
    for name in sorted(arms):
        if higher_is_better:
            better, worse = arms[name], control_values
        else:
            better, worse = control_values, arms[name]
        interval = paired_cluster_bootstrap(better, worse, clusters, resamples, seed, confidence)
        # Fail closed: "clear of zero" needs the whole interval above it, not only the estimate.
        passed = interval.low > 0
        comparisons.append(Comparison(arm=name, interval=interval, passed=passed))
        if not passed:
            side = "higher" if higher_is_better else "lower"
            flags.append(
                f"must-fail control {control} was not beaten by {name} on {metric}: "
                f"{name}'s advantage is {interval.estimate:+.4g} ({confidence:.0%} interval "
                f"{interval.low:+.4g} to {interval.high:+.4g}, {side} is better; it must lie "
                "wholly above 0); check the items for leaked answers and that the control "
                "really cannot answer"
            )
    return ControlResult(
        kind="must_fail",
        control=control,
        metric=metric,
        passed=not flags,
        flags=flags,
        comparisons=comparisons,
    )
