"""The few statistics calibration needs: Cohen's kappa between two judges, and an exact interval
for a rate (how often a judge caught a control).

Cohen's kappa (Cohen 1960): (p_o - p_e) / (1 - p_e), p_o the share of items both judges put in the
same category, p_e the share expected by chance from each judge's own category shares; as
statsmodels.stats.inter_rater.cohens_kappa on the two judges' contingency table. When both judges
put every item in one category p_e is 1 and kappa is undefined: None here (statsmodels divides by
zero), which calibration reads as failing its bar, since it shows nothing about agreement.

The Clopper-Pearson interval (the "exact" binomial interval, as statsmodels'
proportion_confint(method="beta")) from scipy's beta quantiles.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from scipy import stats


def cohens_kappa(first: Sequence[str], second: Sequence[str]) -> float | None:
    if len(first) != len(second):
        raise ValueError(
            f"kappa needs one label per item from each judge: {len(first)}, {len(second)}"
        )
    n = len(first)
    if n == 0:
        return None
    observed = sum(1 for a, b in zip(first, second, strict=True) if a == b) / n
    shares_a, shares_b = Counter(first), Counter(second)
    expected = sum(shares_a[c] * shares_b[c] for c in shares_a) / (n * n)
    if expected >= 1.0:
        return None
    return (observed - expected) / (1.0 - expected)


def clopper_pearson(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    if n <= 0 or not 0 <= successes <= n:
        raise ValueError(f"a rate needs 0 <= successes <= n and n > 0, got {successes}/{n}")
    alpha = 1 - confidence
    low = 0.0 if successes == 0 else float(stats.beta.ppf(alpha / 2, successes, n - successes + 1))
    high = (
        1.0
        if successes == n
        else float(stats.beta.ppf(1 - alpha / 2, successes + 1, n - successes))
    )
    return low, high
