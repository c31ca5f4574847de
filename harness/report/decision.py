"""The confirmatory verdicts (`--analysis`): each declared contrast (C1 - B, C0 - B) on each
endpoint, the validity gates, the ceilings, the interim look and the outcome under the declared
decision rules (harness/report/analysis.py says the file's form).

Per contrast and endpoint, the effect is positive when the candidate is better: for a per-arm
metric the paired difference candidate - baseline on the turns both were judged on (negated when
lower is better, e.g. a violation flag); for a pairwise metric the candidate's share of the votes
minus one half. Its replicates come from a bootstrap over clusters (items, or the T1 pack's
histories), seeded by the plan. Three one-sided tests are read off them at the plan's alpha:
better (H0 effect <= 0), non-inferior (H0 effect <= -margin), worse (H0 effect >= -margin); each
kind is Holm-adjusted across the declared family (every `family = true` endpoint of every
contrast). The status is BETTER if better is shown, else WORSE if worse is shown, else
NON-INFERIOR if non-inferiority is shown, else NOT SHOWN. When the winner's replies are at least
20% longer on average, the length-controlled estimate (the effect at equal length) replaces the
plain one in the tests, and both are printed.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from harness.report.analysis import Analysis, Endpoint
from harness.report.context import Context
from harness.stats import onesided
from harness.stats.significance import holm

LONGER = 1.2  # the winner's mean reply length over the loser's that calls for length control


@dataclass
class EndpointResult:
    contrast: str
    endpoint: Endpoint
    n: int  # clusters with paired data (achieved n)
    units: int
    estimate: float | None = None
    low: float | None = None
    high: float | None = None
    p: dict[str, float] | None = None  # better, non-inferior, worse (raw)
    adjusted: dict[str, float] | None = None
    status: str = "NOT SHOWN"
    mde: float | None = None
    length_ratio: float | None = None  # winner's mean length / loser's
    controlled: tuple[float, float, float] | None = None  # estimate, low, high
    why: str = ""


@dataclass
class Units:
    effects: list[float]
    clusters: list[str]
    log_ratio: list[float]
    cand_len: list[int]
    base_len: list[int]


def _reply_lengths(ctx: Context) -> dict[tuple[str, str, int], int]:
    return {(t.arm, t.item, t.turn): len(t.text or "") for t in ctx.data.turns}


def _units(ctx: Context, ep: Endpoint, cand: str, base: str) -> Units:
    lengths = _reply_lengths(ctx)
    cluster = ctx.inputs.clusters or {}
    dropped = set(ctx.report.dropped_items)
    out = Units([], [], [], [], [])

    def add(item: str, turn: int | None, effect: float) -> None:
        lc = lengths.get((cand, item, turn if turn is not None else -1), 0)
        lb = lengths.get((base, item, turn if turn is not None else -1), 0)
        out.effects.append(effect)
        out.clusters.append(cluster.get(item, item))
        out.log_ratio.append(math.log((lc + 1) / (lb + 1)))
        out.cand_len.append(lc)
        out.base_len.append(lb)

    pairs = [p for p in ctx.inputs.pairs or [] if p.metric == ep.metric and p.item not in dropped]
    for p in sorted(pairs, key=lambda p: (p.item, p.turn, p.run)):
        if {p.arm_a, p.arm_b} == {cand, base}:
            share = p.value if p.arm_a == cand else 1 - p.value
            add(p.item, p.turn, share - 0.5)
    if pairs:
        return out
    per: dict[str, dict[tuple[str, int | None], float]] = defaultdict(dict)
    for j in ctx.inputs.judgments or []:
        if j.metric == ep.metric and j.item not in dropped:
            per[j.arm][(j.item, j.turn)] = j.value
    sign = 1.0 if ep.higher_is_better else -1.0
    for key in sorted(set(per[cand]) & set(per[base]), key=str):
        add(key[0], key[1], sign * (per[cand][key] - per[base][key]))
    return out


def endpoint_results(ctx: Context, plan: Analysis) -> list[EndpointResult]:
    results = []
    for contrast in plan.contrasts:
        cand_role, base_role = plan.role_of(contrast)
        cand, base = plan.arms[cand_role], plan.arms[base_role]
        for ep in plan.endpoints:
            u = _units(ctx, ep, cand, base)
            r = EndpointResult(contrast, ep, len(set(u.clusters)), len(u.effects))
            results.append(r)
            if not u.effects:
                r.why = f"no judgment of {ep.metric!r} pairs {cand} with {base}"
                continue
            _estimate(r, u, plan)
    _classify(results, plan)
    return results


def _estimate(r: EndpointResult, u: Units, plan: Analysis) -> None:
    estimate, reps = onesided.cluster_replicates(u.effects, u.clusters, plan.resamples, plan.seed)
    r.estimate = estimate
    r.low, r.high = onesided.bounds(reps, plan.alpha)
    sd = onesided.cluster_sd(u.effects, u.clusters)
    r.mde = None if sd is None else onesided.mde(sd, r.endpoint.planned_n, plan.alpha, plan.power)
    cand, base = np.mean(u.cand_len), np.mean(u.base_len)
    winner, loser = (cand, base) if estimate >= 0 else (base, cand)
    r.length_ratio = float(winner / loser) if loser > 0 else None
    tested = reps
    if r.length_ratio is not None and r.length_ratio >= LONGER:
        found = onesided.length_controlled(
            u.effects, u.log_ratio, u.clusters, plan.resamples, plan.seed
        )
        if found is not None:
            lc_estimate, lc_reps = found
            r.controlled = (lc_estimate, *onesided.bounds(lc_reps, plan.alpha))
            tested = lc_reps
    margin = r.endpoint.margin
    r.p = {
        "better": onesided.p_at_most(tested, 0.0),
        "non-inferior": onesided.p_at_most(tested, -margin),
        "worse": onesided.p_at_least(tested, -margin),
    }


def _classify(results: list[EndpointResult], plan: Analysis) -> None:
    tested = [r for r in results if r.p is not None]
    family = [r for r in tested if r.endpoint.family]
    for r in tested:
        assert r.p is not None
        r.adjusted = dict(r.p)
    for test in ("better", "non-inferior", "worse"):
        names = {f"{r.contrast}: {r.endpoint.name}": r for r in family}
        adjusted = holm({name: r.p[test] for name, r in names.items() if r.p}, plan.alpha)
        for name, r in names.items():
            assert r.adjusted is not None
            r.adjusted[test] = adjusted[name]
    for r in tested:
        assert r.adjusted is not None
        shown = {test: p < plan.alpha for test, p in r.adjusted.items()}
        if shown["better"]:
            r.status = "BETTER"
        elif shown["worse"]:
            r.status = "WORSE"
        elif shown["non-inferior"]:
            r.status = "NON-INFERIOR"
        else:
            r.status = "NOT SHOWN"


@dataclass
class Reading:
    name: str
    state: str  # passed, failed, not run (gates); held, broken, not read (ceilings)
    detail: str


def gate_readings(ctx: Context, plan: Analysis, results: list[EndpointResult]) -> list[Reading]:
    manifest = ctx.inputs.judgment_set
    out = []
    for gate in plan.gates:
        if gate.name == "n":
            short = [
                f"{r.contrast}: {r.endpoint.name} {r.n} < {r.endpoint.planned_n}"
                for r in results
                if r.endpoint.family and r.n < r.endpoint.planned_n
            ]
            out.append(Reading("n", "failed" if short else "passed", "; ".join(short) or
                               "every family endpoint reached its planned n"))  # fmt: skip
        elif gate.name == "determinism":
            g = ctx.inputs.gate
            state = "not run" if g is None else "passed" if g.get("passed") else "failed"
            out.append(Reading("determinism", state, "--gate" if g else "no --gate was given"))
        elif manifest is None:
            out.append(Reading(gate.name, "not run", "no judgment set (--judgments SET)"))
        elif gate.name == "judges":
            metrics = {ep.metric for ep in plan.endpoints}
            axes = {a.rubric: a.status for a in manifest.axes}
            bad = [
                f"{m}: {axes.get(m, 'not judged')}"
                for m in sorted(metrics)
                if axes.get(m) != "passed"
            ]
            detail = "; ".join(bad) or "every endpoint's axis passed calibration"
            out.append(Reading("judges", "failed" if bad else "passed", detail))
        else:
            bars = manifest.aa if gate.name == "aa" else manifest.stability
            if not bars:
                out.append(Reading(gate.name, "not run", "the set has no such check"))
                continue
            bad = [f"{b.rubric}: {b.status}" for b in bars if b.status != "passed"]
            out.append(Reading(gate.name, "failed" if bad else "passed",
                               "; ".join(bad) or f"{len(bars)} check(s) passed"))  # fmt: skip
    return out


def ceiling_readings(ctx: Context, plan: Analysis) -> list[Reading]:
    out = []
    for c in plan.ceilings:
        baseline_roles = {
            plan.role_of(x)[1] for x in plan.contrasts if plan.role_of(x)[0] == c.role
        }
        base = plan.arms[sorted(baseline_roles)[0]] if baseline_roles else None
        cand_arm, base_arm = ctx.report.arms.get(plan.arms[c.role]), ctx.report.arms.get(base or "")
        if cand_arm is None or base_arm is None:
            out.append(Reading(c.name, "not read", f"no arm for role {c.role} or its baseline"))
            continue
        cand, base_value = _measure(cand_arm, c.measure), _measure(base_arm, c.measure)
        if cand is None or base_value is None:
            out.append(Reading(c.name, "not read", f"{c.measure} not measured"))
            continue
        held = cand <= c.at_most * base_value
        ratio = "-" if base_value == 0 else f"{cand / base_value:.3f}x"
        out.append(Reading(c.name, "held" if held else "broken",
                           f"{c.measure}: {c.role} {cand:.6g} vs {base_value:.6g} ({ratio}; "
                           f"at most {c.at_most:g}x)"))  # fmt: skip
    return out


def _measure(arm: object, measure: str) -> float | None:
    if measure == "cost_per_turn":
        per = getattr(arm, "cost_per_turn", None)
        return None if per is None else float(per.mean)
    latency = getattr(arm, "last_token" if measure == "last_token_p95" else "first_token")
    return None if latency.p95_s is None else float(latency.p95_s)


def outcome(
    plan: Analysis,
    results: list[EndpointResult],
    gates: list[Reading],
    ceilings: list[Reading],
) -> tuple[str, str]:
    """(the outcome, why) under the declared rules, the interim look's stop rules first."""
    blocked = [g for g in gates if g.state != "passed" and g.name != "n"]
    if blocked:
        return "NO VERDICT", "validity gate(s) " + ", ".join(f"{g.name} {g.state}" for g in blocked)
    family = [r for r in results if r.endpoint.family]
    if any(r.p is None for r in family):
        return "NO VERDICT", "a family endpoint has no data"
    achieved = min((r.n for r in family), default=0)
    planned = max((r.endpoint.planned_n for r in family), default=0)
    if achieved < planned:
        look = plan.interim
        if look is None or achieved < look.at_n:
            return "NO VERDICT", f"n {achieved} of the planned {planned}, no interim look due"
        if all(r.adjusted and r.adjusted["better"] < look.efficacy_alpha for r in family):
            why = f"interim look at n {achieved}: stopped for efficacy"
        elif any(r.high is not None and r.high < look.futility_bound for r in family):
            return "KILL", f"interim look at n {achieved}: stopped for futility"
        else:
            return "NO VERDICT", f"interim look at n {achieved}: no stop rule met, continue"
    else:
        why = f"final look at n {achieved}"
    for rule in plan.rules:
        if all(_holds(c, plan, results, gates, ceilings) for c in rule.when):
            held = " and ".join(rule.when) or "no other rule held"
            return rule.outcome, f"{why}; rule {rule.outcome}: {held}"
    raise AssertionError("the last rule always holds")  # checked when the plan is read


def _holds(
    condition: str,
    plan: Analysis,
    results: list[EndpointResult],
    gates: list[Reading],
    ceilings: list[Reading],
) -> bool:
    from harness.report.analysis import CONDITION

    found = CONDITION.match(condition)
    assert found is not None
    if found["gates"]:
        passed = all(g.state == "passed" for g in gates)
        return passed if found["gates"] == "passed" else not passed
    if found["ceiling"]:
        state = next((c.state for c in ceilings if c.name == found["ceiling"]), "not read")
        return state == found["held"]
    wanted = set(found["status"].split("|"))
    statuses = [r.status for r in results if r.contrast == found["contrast"] and r.endpoint.family]
    test = any if found["quant"] == "any" else all
    return bool(statuses) and test(s in wanted for s in statuses)
