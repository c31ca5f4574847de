"""Significance tests for paired arms: McNemar on paired right/wrong outcomes, Holm over a family.

McNemar looks only at the discordant pairs: b = units arm A got right and arm B wrong, c = the
reverse. The exact test is the two-sided binomial test of b against Binomial(b + c, 1/2); the
asymptotic one is the chi-square test with one degree of freedom, with Edwards' continuity
correction by default. Both agree with statsmodels.stats.contingency_tables.mcnemar
(https://www.statsmodels.org/stable/generated/statsmodels.stats.contingency_tables.mcnemar.html)
except in two corners where statsmodels' formula says something no reader should be told: with
b == c the corrected statistic (|b - c| - 1)^2 / (b + c) is positive there (we clamp |b - c| - 1 at
0, so p = 1), and with no discordant pair at all it divides by zero (we return p = 1: no evidence).

Holm's step-down adjustment (Holm 1979), as statsmodels.stats.multitest.multipletests
(method="holm"): the i-th smallest of m p-values becomes max over j <= i of min(1, (m - j + 1) p_j).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from scipy import stats


def discordant_pairs(a_right: Sequence[bool], b_right: Sequence[bool]) -> tuple[int, int]:
    """(b, c) for McNemar: units only arm A got right, units only arm B got right."""
    if len(a_right) != len(b_right):
        raise ValueError(
            f"paired outcomes need one per unit and arm: {len(a_right)} and {len(b_right)}"
        )
    only_a = sum(1 for x, y in zip(a_right, b_right, strict=True) if x and not y)
    only_b = sum(1 for x, y in zip(a_right, b_right, strict=True) if y and not x)
    return only_a, only_b


def mcnemar(b: int, c: int, exact: bool = True, correction: bool = True) -> float:
    """Two-sided p-value of McNemar's test on the discordant counts b and c."""
    if b < 0 or c < 0 or int(b) != b or int(c) != c:
        raise ValueError(f"McNemar needs counts of discordant pairs, got b={b}, c={c}")
    n = b + c
    if n == 0:
        return 1.0
    if exact:
        return float(min(1.0, 2 * stats.binom.cdf(min(b, c), n, 0.5)))
    gap = abs(b - c) - (1 if correction else 0)
    statistic = max(gap, 0) ** 2 / n
    return float(stats.chi2.sf(statistic, 1))


def holm(pvalues: Mapping[str, float], alpha: float = 0.05) -> dict[str, float]:
    """Holm-adjusted p-values by name (compare each with `alpha`; `holm_rejects` does).

    `alpha` does not change the adjusted values; it is checked here so a family declared with a
    nonsense level fails where it is declared, not later when it is compared."""
    _check_alpha(alpha)
    for name, p in pvalues.items():
        if not (isinstance(p, int | float) and math.isfinite(p) and 0 <= p <= 1):
            raise ValueError(f"p-value {name!r} is {p!r}: a p-value lies between 0 and 1")
    # Ties are ordered by name so the output does not depend on the dict's order.
    ordered = sorted(pvalues.items(), key=lambda kv: (kv[1], kv[0]))
    m = len(ordered)
    adjusted: dict[str, float] = {}
    running = 0.0
    for rank, (name, p) in enumerate(ordered):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[name] = running
    return {name: adjusted[name] for name in pvalues}


def holm_rejects(pvalues: Mapping[str, float], alpha: float = 0.05) -> dict[str, bool]:
    """Which hypotheses of the family Holm's procedure rejects at family-wise level `alpha`."""
    return {name: p <= alpha for name, p in holm(pvalues, alpha).items()}


def _check_alpha(alpha: float) -> None:
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1 (e.g. 0.05), got {alpha}")
