"""The confirmatory verdicts (`--analysis`): each declared contrast (C1 - B, C0 - B) on each
endpoint, the validity gates, the ceilings, the interim look and the outcome under the declared
decision rules (harness/report/reading/analysis.py says the file's form; harness/stats/rules.py
holds each rule of the study design, sections 4.4 and 4.6).

Per contrast and endpoint, the effect is positive when the candidate is better: for a per-arm
metric the paired difference candidate - baseline on the turns both were judged on (negated when
lower is better, e.g. a violation flag); for a pairwise metric the candidate's share of the votes
minus one half. Its replicates come from a bootstrap over clusters (items, or the T1 pack's
histories), or over cards and then scripts where the endpoint names its cards (`card_pattern`),
seeded by the plan. Read off them: BETTER (the one-sided superiority test at alpha,
Holm-adjusted across the family, a pair served by reuse counted once, plus the endpoint's win
conditions), WORSE (the unadjusted two-sided 95% upper bound below 0) and NON-INFERIOR (the
unadjusted one-sided lower bound above minus the margin). When the winner's replies are at least
20% longer on average, the length-controlled estimate (the effect at equal length) replaces the
plain one in the tests, and both are printed.

Below the planned n, at or past the interim look, each axis reads only "stop" (efficacy or harm at
|z| >= 3.29, futility) or "continue"; the report shows nothing else of it
(harness/report/confirmatory/section.py).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Hashable
from dataclasses import dataclass, field

import numpy as np

from harness.report.confirmatory.conditions import Verdict, holds
from harness.report.confirmatory.readings import Reading
from harness.report.context import Context
from harness.report.reading import Analysis, Endpoint
from harness.stats import onesided, rules

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
    upper_95: float | None = None  # the two-sided 95% interval's upper end (WORSE reads it)
    p: dict[str, float] | None = None  # better, non-inferior (one-sided), worse (two-sided)
    adjusted: dict[str, float] | None = None  # better Holm-adjusted; the others as raw
    status: str = "NOT SHOWN"
    mde: float | None = None
    length_ratio: float | None = None  # winner's mean length / loser's
    controlled: tuple[float, float, float] | None = None  # estimate, low, high
    win: dict[str, bool] = field(default_factory=dict)  # each declared win condition's reading
    below_sizing: bool = False
    interim: rules.InterimReading | None = None  # set when the look is an interim one
    se: float | None = None  # the tested replicates' standard deviation (the interim z)
    tested_estimate: float | None = None  # the length-controlled one where it replaced it
    why: str = ""


@dataclass
class Units:
    effects: list[float]
    clusters: list[str]
    cards: list[str]
    strata: list[str]
    log_ratio: list[float]
    cand_len: list[int]
    base_len: list[int]
    by_judge: dict[str, list[float]] = field(default_factory=dict)


def _reply_lengths(ctx: Context) -> dict[tuple[str, str, int], int]:
    return {(t.arm, t.item, t.turn): len(t.text or "") for t in ctx.data.turns}


def _named(pattern: str | None, item: str, fallback: str) -> str:
    found = re.search(pattern, item) if pattern else None
    return found.group(1) if found and found.group(1) is not None else fallback


JudgeShares = dict[tuple[object, ...], dict[str, float]]


def _judge_shares(ctx: Context) -> JudgeShares:
    """Each judge's own share per judged outcome of a judgment set, keyed (metric, run, item,
    turn, arm) for a per-arm outcome and (metric, run, item, turn, arm_a, arm_b) for a pair;
    empty for a JSONL file (one value per answer: no judge's own mean to read)."""
    given = ctx.inputs.given("judgments")
    if given is None or ctx.inputs.judgment_set is None:
        return {}
    from harness.judge import read_outcomes

    set_dir = given.path.parent
    seal = ctx.inputs.seal or set_dir.with_name(set_dir.name + ".seal.json")
    found = read_outcomes(set_dir, seal)
    out: JudgeShares = {}
    for f in found.flags:
        out[(f.metric, f.run, f.item, f.turn, f.arm)] = f.by_judge
    for g in found.grades:
        out[(g.metric, g.run, g.item, g.turn, g.arm)] = g.by_judge
    for p in found.pairs:
        out[(p.metric, p.run, p.item, p.turn, p.arm_a, p.arm_b)] = p.by_judge
    return out


def units(
    ctx: Context, ep: Endpoint, cand: str, base: str, shares: JudgeShares | None = None
) -> Units:
    shares = shares or {}
    lengths = _reply_lengths(ctx)
    cluster = ctx.inputs.clusters or {}
    dropped = set(ctx.report.dropped_items)
    out = Units([], [], [], [], [], [], [])

    def add(item: str, turn: int | None, effect: float) -> None:
        lc = lengths.get((cand, item, turn if turn is not None else -1), 0)
        lb = lengths.get((base, item, turn if turn is not None else -1), 0)
        out.effects.append(effect)
        out.clusters.append(cluster.get(item, item))
        out.cards.append(_named(ep.card_pattern, item, cluster.get(item, item)))
        out.strata.append(_named(ep.same_sign_by, item, "(no dataset)"))
        out.log_ratio.append(math.log((lc + 1) / (lb + 1)))
        out.cand_len.append(lc)
        out.base_len.append(lb)

    pairs = [p for p in ctx.inputs.pairs or [] if p.metric == ep.metric and p.item not in dropped]
    for p in sorted(pairs, key=lambda p: (p.item, p.turn, p.run)):
        if {p.arm_a, p.arm_b} == {cand, base}:
            flip = p.arm_a != cand
            share = 1 - p.value if flip else p.value
            add(p.item, p.turn, share - 0.5)
            mine = shares.get((p.metric, p.run, p.item, p.turn, p.arm_a, p.arm_b), {})
            for judge, value in mine.items():
                out.by_judge.setdefault(judge, []).append((1 - value if flip else value) - 0.5)
    if pairs:
        return out
    per: dict[str, dict[tuple[str, int | None], float]] = defaultdict(dict)
    own: dict[str, dict[tuple[str, int | None], dict[str, float]]] = defaultdict(dict)
    for j in ctx.inputs.judgments or []:
        if j.metric == ep.metric and j.item not in dropped:
            per[j.arm][(j.item, j.turn)] = j.value
            own[j.arm][(j.item, j.turn)] = shares.get((j.metric, j.run, j.item, j.turn, j.arm), {})
    sign = 1.0 if ep.higher_is_better else -1.0
    for key in sorted(set(per[cand]) & set(per[base]), key=str):
        add(key[0], key[1], sign * (per[cand][key] - per[base][key]))
        mine, theirs = own[cand][key], own[base][key]
        for judge in sorted(set(mine) & set(theirs)):
            out.by_judge.setdefault(judge, []).append(sign * (mine[judge] - theirs[judge]))
    return out


def endpoint_results(ctx: Context, plan: Analysis) -> list[EndpointResult]:
    results = []
    shares = _judge_shares(ctx) if any(ep.judges_on_side for ep in plan.endpoints) else {}
    for contrast in plan.contrasts:
        cand_role, base_role = plan.role_of(contrast)
        cand, base = plan.arms[cand_role], plan.arms[base_role]
        for ep in plan.endpoints:
            u = units(ctx, ep, cand, base, shares)
            r = EndpointResult(contrast, ep, len(set(u.clusters)), len(u.effects))
            results.append(r)
            if not u.effects:
                r.why = f"no judgment of {ep.metric!r} pairs {cand} with {base}"
                continue
            _estimate(r, u, plan)
    _classify(results, plan)
    return results


def interim_due(ctx: Context) -> bool:
    """Whether the confirmatory data sit at an interim look (below the planned n, at or past
    the look): then the report shows each axis's "stop" or "continue" and no effect at all."""
    plan = ctx.inputs.analysis
    if plan is None or plan.interim is None:
        return False
    family = [ep for ep in plan.endpoints if ep.family]
    achieved = min(
        (
            len(set(units(ctx, ep, plan.arms[c], plan.arms[b]).clusters))
            for ep in family
            for c, b in map(plan.role_of, plan.contrasts)
        ),
        default=0,
    )
    planned = max((ep.planned_n for ep in family), default=0)
    return plan.interim.at_n <= achieved < planned


def _replicates(u: Units, ep: Endpoint, plan: Analysis) -> tuple[float, np.ndarray]:
    if ep.card_pattern is not None:
        return onesided.two_level_replicates(
            u.effects, u.cards, u.clusters, plan.resamples, plan.seed
        )
    return onesided.cluster_replicates(u.effects, u.clusters, plan.resamples, plan.seed)


def _estimate(r: EndpointResult, u: Units, plan: Analysis) -> None:
    ep = r.endpoint
    estimate, reps = _replicates(u, ep, plan)
    r.estimate = estimate
    r.low, r.high = onesided.bounds(reps, plan.alpha)
    sd = onesided.cluster_sd(u.effects, u.clusters)
    r.mde = None if sd is None else onesided.mde(sd, ep.planned_n, plan.alpha, plan.power)
    cand, base = np.mean(u.cand_len), np.mean(u.base_len)
    winner, loser = (cand, base) if estimate >= 0 else (base, cand)
    r.length_ratio = float(winner / loser) if loser > 0 else None
    tested, tested_estimate = reps, estimate
    if r.length_ratio is not None and r.length_ratio >= LONGER:
        found = onesided.length_controlled(
            u.effects, u.log_ratio, u.clusters, plan.resamples, plan.seed
        )
        if found is not None:
            lc_estimate, lc_reps = found
            r.controlled = (lc_estimate, *onesided.bounds(lc_reps, plan.alpha))
            tested, tested_estimate = lc_reps, lc_estimate
    r.upper_95 = float(np.quantile(tested, rules.WORSE_LEVEL))
    r.se = float(np.std(tested, ddof=1)) if tested.size > 1 else 0.0
    r.p = {
        "better": onesided.p_at_most(tested, 0.0),
        "non-inferior": onesided.p_at_most(tested, -ep.margin),
        "worse": min(1.0, 2 * onesided.p_at_least(tested, 0.0)),
    }
    r.below_sizing = rules.below_sizing(r.upper_95, ep.sizing_margin)
    if ep.judges_on_side:
        means = {j: float(np.mean(v)) for j, v in sorted(u.by_judge.items()) if v}
        r.win["each judge on the candidate's side"] = rules.judges_on_side(means)
    if ep.leave_one_out:
        kept = rules.sign_kept_leaving_one_out(u.effects, u.cards)
        unit = "card" if ep.card_pattern else "cluster"
        r.win[f"the sign kept leaving out any one {unit}"] = kept
    if ep.same_sign_by is not None:
        r.win["the same sign in every dataset"] = rules.same_sign_in_every(u.effects, u.strata)
    r.tested_estimate = tested_estimate


def _classify(results: list[EndpointResult], plan: Analysis) -> None:
    tested = [r for r in results if r.p is not None]
    family = [r for r in tested if r.endpoint.family]
    same = [
        [(r.contrast, r.endpoint.name) for r in family if r.endpoint.name == ep.name]
        for ep in plan.endpoints
        if ep.served_by_reuse
    ]
    raw: dict[Hashable, float] = {
        (r.contrast, r.endpoint.name): r.p["better"] for r in family if r.p
    }
    adjusted = rules.holm_once(raw, same)
    for r in tested:
        assert r.p is not None and r.upper_95 is not None and r.low is not None
        r.adjusted = dict(r.p)
        r.adjusted["better"] = float(adjusted.get((r.contrast, r.endpoint.name), r.p["better"]))
        failed = [name for name, ok in r.win.items() if not ok]
        better = r.adjusted["better"] < plan.alpha
        r.status = rules.status(
            better,
            rules.is_worse(r.upper_95),
            r.p["non-inferior"] < plan.alpha,
            r.endpoint.superiority_only,
            failed,
        )
        if better and failed:
            r.why = "better, but not " + " nor ".join(failed)


def outcome(
    plan: Analysis,
    results: list[EndpointResult],
    gates: list[Reading],
    ceilings: list[Reading],
) -> tuple[str, str]:
    """(the outcome, why) under the declared rules; below the planned n, the interim look."""
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
        read = interim_look(plan, results)
        stopped = sum(r.decision == "stop" for r in read.values())
        if stopped < len(read):
            return "NO VERDICT", f"interim look at n {achieved}: continue"
        why = f"interim look at n {achieved}: every axis stopped"
    else:
        why = f"final look at n {achieved}"
    verdicts = [
        Verdict(r.contrast, r.endpoint.name, r.endpoint.family, r.status, r.below_sizing)
        for r in results
    ]
    passed = all(g.state == "passed" for g in gates)
    states = {c.name: c.state for c in ceilings}
    for rule in plan.rules:
        if all(holds(c, verdicts, passed, states) for c in rule.when):
            held = " and ".join(rule.when) or "no other rule held"
            return rule.outcome, f"{why}; rule {rule.outcome}: {held}"
    raise AssertionError("the last rule always holds")  # checked when the plan is read


def interim_look(plan: Analysis, results: list[EndpointResult]) -> dict[str, rules.InterimReading]:
    """Each axis (contrast: endpoint with data) at the interim look, "stop" or "continue"; an
    axis that stops keeps the verdict read now: BETTER for efficacy (when its win conditions
    hold), WORSE for harm, its status for futility."""
    z = plan.interim.z if plan.interim is not None else rules.Z_INTERIM
    out = {}
    for r in results:
        if r.tested_estimate is None or r.se is None or r.upper_95 is None:
            continue
        reading = rules.interim_reading(
            r.tested_estimate, r.se, r.upper_95, r.endpoint.sizing_margin, z
        )
        r.interim = reading
        if reading.reason == "efficacy":
            r.status = "BETTER" if all(r.win.values()) else "NOT SHOWN"
        elif reading.reason == "harm":
            r.status = "WORSE"
        out[f"{r.contrast}: {r.endpoint.name}"] = reading
    return out
