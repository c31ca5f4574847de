"""The study design's decision rules on one endpoint (shared/study-design.txt, sections 4.4 and
4.6), each a small function on numbers, so the report (harness/report/confirmatory/decision.py,
bounds from a cluster bootstrap) and the plan simulation (harness/report/confirmatory/simulate.py,
bounds from the normal approximation) read an endpoint the same way.

Every effect is oriented so that a positive value favours the candidate (a pair score enters as
its share minus one half, so "above 0.5" is "above 0").

- BETTER: the superiority test, Holm-adjusted across the family, rejects at alpha (the lower
  one-sided bound above 0); on an endpoint that asks for them, also every win condition
  (`win_conditions`): each judge's own mean on the candidate's side, the sign kept when any one
  card (cluster) is left out, the same sign in every dataset (family).
- WORSE: the unadjusted two-sided 95% upper bound is below 0. No margin, no Holm: a candidate
  reliably below the baseline is worse even when the loss is inside the non-inferiority margin.
- NON-INFERIOR: the unadjusted one-sided lower bound at alpha is above minus the margin (GO needs
  every one, so no correction); an endpoint declared superiority-only (S1) has no such reading.
- The order: BETTER, then WORSE, then NON-INFERIOR, then NOT SHOWN.
- Holm counts a C0/C1 pair served by reuse once (`holm_once`): the two contrasts on such an
  endpoint are one test (its larger p), and both get its adjusted p.
- The interim look (`interim_reading`): an axis stops for efficacy at z >= 3.29 and for harm at
  z <= -3.29, and for futility when its upper 95% bound is below the sizing margin and its
  estimate is at most 0; otherwise it continues.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from harness.stats.significance import holm

Z_INTERIM = 3.29  # two-sided 0.001: the Haybittle-Peto bound the design names
WORSE_LEVEL = 0.975  # WORSE reads the two-sided 95% interval's upper end

Status = Literal["BETTER", "NON-INFERIOR", "WORSE", "NOT SHOWN"]


def is_worse(upper_95: float) -> bool:
    """WORSE: the unadjusted two-sided 95% upper bound lies below 0."""
    return upper_95 < 0.0


def is_non_inferior(lower: float, margin: float) -> bool:
    """NON-INFERIOR: the unadjusted one-sided lower bound at alpha lies above -margin."""
    return lower > -margin


def below_sizing(upper_95: float, sizing_margin: float | None) -> bool:
    """The upper 95% bound sits below the sizing margin (the effect the study was sized for):
    the data rule out the effect the study hoped for. With no sizing margin: never."""
    return sizing_margin is not None and upper_95 < sizing_margin


def sign_kept_leaving_one_out(effects: Sequence[float], groups: Sequence[Hashable]) -> bool:
    """Whether the mean effect stays above 0 with any one group (card, or cluster) left out.
    Fewer than two groups: nothing can be left out, and the condition does not hold."""
    sums: dict[Hashable, float] = defaultdict(float)
    counts: dict[Hashable, int] = defaultdict(int)
    for value, group in zip(effects, groups, strict=True):
        sums[group] += value
        counts[group] += 1
    if len(sums) < 2:
        return False
    total, n = sum(sums.values()), sum(counts.values())
    return all((total - sums[g]) / (n - counts[g]) > 0 for g in sums)


def same_sign_in_every(effects: Sequence[float], strata: Sequence[Hashable]) -> bool:
    """Whether the mean effect is above 0 within every stratum (dataset) that has data."""
    sums: dict[Hashable, float] = defaultdict(float)
    counts: dict[Hashable, int] = defaultdict(int)
    for value, stratum in zip(effects, strata, strict=True):
        sums[stratum] += value
        counts[stratum] += 1
    return bool(sums) and all(sums[s] / counts[s] > 0 for s in sums)


def judges_on_side(means: Mapping[str, float]) -> bool:
    """Each judge's own mean effect is on the candidate's side (above 0); no judge: not shown."""
    return bool(means) and all(m > 0 for m in means.values())


def status(
    better: bool,
    worse: bool,
    non_inferior: bool,
    superiority_only: bool = False,
    win_failed: Iterable[str] = (),
) -> Status:
    """An endpoint's verdict from its tests; `win_failed` names the win conditions that did not
    hold (a BETTER needs none)."""
    if better and not list(win_failed):
        return "BETTER"
    if worse:
        return "WORSE"
    if non_inferior and not superiority_only:
        return "NON-INFERIOR"
    return "NOT SHOWN"


def holm_once(
    pvalues: Mapping[Hashable, float], same: Iterable[Iterable[Hashable]] = ()
) -> dict[Hashable, float]:
    """Holm-adjusted p-values where each group in `same` (the contrasts of an endpoint served by
    reuse) is one test: it takes its members' largest p and fills one slot of the family."""
    slot: dict[Hashable, Hashable] = {key: key for key in pvalues}
    for group in same:
        members = [key for key in group if key in pvalues]
        for key in members:
            slot[key] = members[0]
    slots: dict[Hashable, float] = {}
    for key, p in pvalues.items():
        slots[slot[key]] = max(p, slots.get(slot[key], 0.0))
    adjusted = holm({str(k): p for k, p in slots.items()}) if slots else {}
    return {key: adjusted[str(slot[key])] for key in pvalues}


@dataclass(frozen=True)
class InterimReading:
    decision: Literal["stop", "continue"]
    reason: Literal["efficacy", "harm", "futility", ""]


def interim_reading(
    estimate: float, se: float, upper_95: float, sizing_margin: float | None, z: float = Z_INTERIM
) -> InterimReading:
    """One axis at the interim look: stop at |estimate / se| >= z (efficacy above, harm below),
    or for futility (upper 95% bound below the sizing margin and estimate <= 0)."""
    ratio = estimate / se if se > 0 else math.copysign(math.inf, estimate) if estimate else 0.0
    if ratio >= z:
        return InterimReading("stop", "efficacy")
    if ratio <= -z:
        return InterimReading("stop", "harm")
    if estimate <= 0 and below_sizing(upper_95, sizing_margin):
        return InterimReading("stop", "futility")
    return InterimReading("continue", "")
