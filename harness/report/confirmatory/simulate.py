"""`harness plan simulate PLAN`: the whole decision rule of an analysis plan, interim look
included, simulated at zero spend (study design, section 4.6) over three kinds of scenario with
the plan's sizes: every endpoint equal; one endpoint better by its sizing margin; one endpoint
worse by its non-inferiority margin (by its sizing margin when it has none: superiority only).

Each simulated study draws, for every contrast and endpoint, `planned_n` cluster effects from a
normal distribution with the scenario's mean and the endpoint's `planning_sd` (the spread of one
cluster's effect, which the pilot or the blinded re-estimation gives). The scenario moves the
first contrast (the candidate, e.g. C1 - B); the others stay equal. It then reads the endpoint
as the report does (harness/stats/rules.py), with the normal approximation standing in for the
bootstrap: the estimate is the mean, its standard error the clusters' sd over root n, the
one-sided bound at alpha and the two-sided 95% upper bound follow from it. Superiority is
Holm-adjusted across the family (a pair served by reuse counted once), WORSE and
non-inferiority are unadjusted, a BETTER needs the sign kept leaving out any one cluster where
the endpoint asks for it. The interim look reads the first `at_n` clusters of every axis: an axis
that stops keeps its interim verdict, the others are read on the full sample. The plan's rules
then give the outcome, with every validity gate passed and every ceiling held (the simulation
measures the statistics, not the arms' costs).

What it does not model: the judges (each judge's mean is taken to sit on the estimate's side),
the datasets of `same_sign_by` (taken to agree), the clusters' card structure (one level), the
correlation between contrasts that share a baseline, the length control, and the bootstrap's
own small-sample behaviour.

The figures: P(GO) per scenario with its Monte Carlo standard error, each endpoint's minimum
detectable effect at the plan's power (one-sided alpha, unadjusted), and whether the targets
P(GO | one better) >= 0.80 (every such scenario) and P(GO | all equal) <= 0.05 are met.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable
from dataclasses import dataclass

import numpy as np
from scipy import stats

from harness.errors import HarnessError
from harness.report.confirmatory.conditions import Verdict, holds
from harness.report.reading import Analysis, Endpoint
from harness.stats import onesided, rules

TARGET_BETTER = 0.80  # P(GO | one endpoint better by its sizing margin) at least this
TARGET_EQUAL = 0.05  # P(GO | every endpoint equal) at most this
CHUNK = 500  # studies simulated per step (progress is reported per step)

Axis = tuple[str, str]  # (contrast, endpoint name)
Progress = Callable[[int, int, int, int], None]  # scenario index, scenarios, done, of


@dataclass(frozen=True)
class Scenario:
    name: str
    kind: str  # equal, better, worse
    shift: dict[Axis, float]


@dataclass(frozen=True)
class ScenarioResult:
    scenario: Scenario
    go: int
    sims: int

    @property
    def p_go(self) -> float:
        return self.go / self.sims

    @property
    def se(self) -> float:
        return math.sqrt(self.p_go * (1 - self.p_go) / self.sims)


@dataclass(frozen=True)
class Simulation:
    results: list[ScenarioResult]
    mde: dict[str, float]  # endpoint -> MDE at the plan's power
    sims: int
    seed: int

    def target_better(self) -> bool:
        better = [r.p_go for r in self.results if r.scenario.kind == "better"]
        return bool(better) and min(better) >= TARGET_BETTER

    def target_equal(self) -> bool:
        return all(r.p_go <= TARGET_EQUAL for r in self.results if r.scenario.kind == "equal")


def check_plan(plan: Analysis) -> None:
    """Refuse a plan the simulation cannot read, naming the field to add."""
    for ep in plan.endpoints:
        if ep.planning_sd is None:
            raise HarnessError(
                f"endpoint {ep.name} has no planning_sd: the simulation needs the spread of one "
                "cluster's effect",
                hint=f"add planning_sd = ... to endpoint {ep.name} (from the pilot or the "
                "blinded re-estimation) and run again",
            )
        if ep.family and ep.sizing_margin is None:
            raise HarnessError(
                f"endpoint {ep.name} has no sizing_margin: the 'one better' scenario moves it by "
                "that margin",
                hint=f"add sizing_margin = ... to endpoint {ep.name} and run again",
            )


def scenarios(plan: Analysis) -> list[Scenario]:
    candidate = plan.contrasts[0]
    out = [Scenario("every endpoint equal", "equal", {})]
    family = [ep for ep in plan.endpoints if ep.family]
    for ep in family:
        assert ep.sizing_margin is not None
        out.append(
            Scenario(
                f"{ep.name} better by {ep.sizing_margin:g}",
                "better",
                {(candidate, ep.name): ep.sizing_margin},
            )
        )
    for ep in plan.endpoints:
        by = ep.sizing_margin if ep.superiority_only and ep.sizing_margin else ep.margin
        out.append(Scenario(f"{ep.name} worse by {by:g}", "worse", {(candidate, ep.name): -by}))
    return out


def mde(plan: Analysis) -> dict[str, float]:
    return {
        ep.name: onesided.mde(ep.planning_sd or 0.0, ep.planned_n, plan.alpha, plan.power)
        for ep in plan.endpoints
    }


@dataclass
class _Read:
    """One axis read in every simulated study at once (arrays over studies)."""

    estimate: np.ndarray
    se: np.ndarray
    p_better: np.ndarray
    lower: np.ndarray
    upper_95: np.ndarray
    kept: np.ndarray  # the sign kept leaving out any one cluster


def _read(x: np.ndarray, ep: Endpoint, alpha: float) -> _Read:
    n = x.shape[1]
    estimate = x.mean(axis=1)
    se = x.std(axis=1, ddof=1) / math.sqrt(n) if n > 1 else np.zeros(x.shape[0])
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, estimate / se, np.sign(estimate) * np.inf)
    total = x.sum(axis=1, keepdims=True)
    kept = ((total - x) / (n - 1) > 0).all(axis=1) if n > 1 else np.zeros(x.shape[0], bool)
    return _Read(
        estimate=estimate,
        se=se,
        p_better=stats.norm.sf(z),
        lower=estimate - stats.norm.isf(alpha) * se,
        upper_95=estimate + stats.norm.isf(1 - rules.WORSE_LEVEL) * se,
        kept=kept,
    )


def _holm(p: np.ndarray) -> np.ndarray:
    """Holm-adjusted p-values along axis 1 (one row per study), as rules.holm_once per row."""
    m = p.shape[1]
    order = np.argsort(p, axis=1, kind="stable")
    ranked = np.take_along_axis(p, order, axis=1) * (m - np.arange(m))
    ranked = np.minimum(np.maximum.accumulate(ranked, axis=1), 1.0)
    out = np.empty_like(p)
    np.put_along_axis(out, order, ranked, axis=1)
    return out


def _statuses(plan: Analysis, reads: dict[Axis, _Read]) -> dict[Axis, np.ndarray]:
    """Each axis's status in every study, Holm across the family with reuse pairs as one."""
    endpoints = {ep.name: ep for ep in plan.endpoints}
    slots: dict[Hashable, list[Axis]] = {}
    for axis in reads:
        ep = endpoints[axis[1]]
        if ep.family:
            slots.setdefault(ep.name if ep.served_by_reuse else axis, []).append(axis)
    adjusted: dict[Axis, np.ndarray] = {}
    if slots:
        p = np.column_stack(
            [np.max([reads[a].p_better for a in axes], axis=0) for axes in slots.values()]
        )
        holm = _holm(p)
        for i, axes in enumerate(slots.values()):
            for axis in axes:
                adjusted[axis] = holm[:, i]
    out = {}
    for axis, r in reads.items():
        ep = endpoints[axis[1]]
        better = adjusted.get(axis, r.p_better) < plan.alpha
        if ep.leave_one_out:
            better = better & r.kept
        worse = r.upper_95 < 0
        ni = (r.lower > -ep.margin) & (not ep.superiority_only)
        out[axis] = np.where(
            better, "BETTER", np.where(worse, "WORSE", np.where(ni, "NON-INFERIOR", "NOT SHOWN"))
        )
    return out


def _interim(plan: Analysis, reads: dict[Axis, _Read]) -> tuple[np.ndarray, dict]:
    """(stopped per axis and study, the interim verdicts) at the interim look."""
    assert plan.interim is not None
    endpoints = {ep.name: ep for ep in plan.endpoints}
    now = _statuses(plan, reads)
    stopped, verdicts = {}, {}
    for axis, r in reads.items():
        ep = endpoints[axis[1]]
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(r.se > 0, r.estimate / r.se, np.sign(r.estimate) * np.inf)
        efficacy = z >= plan.interim.z
        harm = z <= -plan.interim.z
        sizing = ep.sizing_margin if ep.sizing_margin is not None else -np.inf
        futility = (r.estimate <= 0) & (r.upper_95 < sizing) & ~efficacy & ~harm
        won = efficacy & (r.kept if ep.leave_one_out else True)
        verdicts[axis] = np.where(
            won, "BETTER", np.where(efficacy, "NOT SHOWN", np.where(harm, "WORSE", now[axis]))
        )
        stopped[axis] = efficacy | harm | futility
    return np.column_stack(list(stopped.values())), verdicts


def _outcomes(plan: Analysis, statuses: dict[Axis, np.ndarray], below: dict) -> np.ndarray:
    """The outcome of every study under the plan's rules (gates passed, ceilings held)."""
    family = {ep.name: ep.family for ep in plan.endpoints}
    ceilings = {c.name: "held" for c in plan.ceilings}
    sims = next(iter(statuses.values())).shape[0]
    out = np.empty(sims, dtype=object)
    for s in range(sims):
        verdicts = [
            Verdict(c, e, family[e], str(statuses[(c, e)][s]), bool(below[(c, e)][s]))
            for c, e in statuses
        ]
        out[s] = next(
            rule.outcome
            for rule in plan.rules
            if all(holds(cond, verdicts, True, ceilings) for cond in rule.when)
        )
    return out


def simulate_studies(plan: Analysis, scenario: Scenario, sims: int, seed: int) -> np.ndarray:
    """The outcome of each of `sims` simulated studies under one scenario."""
    rng = np.random.default_rng(seed)
    axes = [(c, ep) for c in plan.contrasts for ep in plan.endpoints]
    data = {
        (c, ep.name): rng.normal(
            scenario.shift.get((c, ep.name), 0.0), ep.planning_sd or 0.0, (sims, ep.planned_n)
        )
        for c, ep in axes
    }
    eps = {ep.name: ep for ep in plan.endpoints}
    final = {a: _read(x, eps[a[1]], plan.alpha) for a, x in data.items()}
    statuses = _statuses(plan, final)
    below = {a: r.upper_95 < (eps[a[1]].sizing_margin or -np.inf) for a, r in final.items()}
    planned = max((ep.planned_n for ep in plan.endpoints if ep.family), default=0)
    if plan.interim is not None and plan.interim.at_n < planned:
        at = plan.interim.at_n
        early = {
            a: _read(x[:, : min(at, x.shape[1])], eps[a[1]], plan.alpha) for a, x in data.items()
        }
        stopped, interim = _interim(plan, early)
        for i, axis in enumerate(data):
            statuses[axis] = np.where(stopped[:, i], interim[axis], statuses[axis])
            sizing = eps[axis[1]].sizing_margin or -np.inf
            below[axis] = np.where(stopped[:, i], early[axis].upper_95 < sizing, below[axis])
    return _outcomes(plan, statuses, below)


def simulate(plan: Analysis, sims: int, seed: int, progress: Progress | None = None) -> Simulation:
    check_plan(plan)
    found = []
    listed = scenarios(plan)
    for i, scenario in enumerate(listed):
        go = 0
        for start in range(0, sims, CHUNK):
            size = min(CHUNK, sims - start)
            outcomes = simulate_studies(plan, scenario, size, seed + 7919 * i + start)
            go += int(np.count_nonzero(outcomes == "GO"))
            if progress is not None:
                progress(i, len(listed), start + size, sims)
        found.append(ScenarioResult(scenario, go, sims))
    return Simulation(found, mde(plan), sims, seed)


def describe(result: Simulation, plan: Analysis) -> list[str]:
    """The figures, one line each, as `harness plan simulate` prints them."""
    lines = [
        f"plan {plan.sha256[:12]}: {result.sims} simulated studies per scenario, seed "
        f"{result.seed}; normal approximation, interim look "
        + (
            "none"
            if plan.interim is None
            else f"at n {plan.interim.at_n} (|z| >= {plan.interim.z:g})"
        )
    ]
    for r in result.results:
        lines.append(f"P(GO | {r.scenario.name}) = {r.p_go:.3f} (MC se {r.se:.3f})")
    for name, value in result.mde.items():
        ep = next(e for e in plan.endpoints if e.name == name)
        lines.append(
            f"MDE {name}: {value:.4f} at {plan.power:.0%} power, n {ep.planned_n}, one-sided "
            f"alpha {plan.alpha:g} (sizing margin {ep.sizing_margin})"
        )
    better = "met" if result.target_better() else "NOT met"
    equal = "met" if result.target_equal() else "NOT met"
    lines.append(f"target P(GO | one better) >= {TARGET_BETTER:.2f}: {better}")
    lines.append(f"target P(GO | all equal) <= {TARGET_EQUAL:.2f}: {equal}")
    return lines
