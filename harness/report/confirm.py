"""The confirmatory verdicts in section 7: the analysis plan's hash, each contrast and endpoint
with its interval, one-sided tests, Holm-adjusted p-values, status, planned and achieved n and
minimum detectable effect, the length-controlled estimate where it applies, the validity gates'
and ceilings' readings, the interim look and the outcome (harness/report/decision.py)."""

from __future__ import annotations

from harness.report import charts
from harness.report.context import Context
from harness.report.decision import (
    LONGER,
    ceiling_readings,
    endpoint_results,
    gate_readings,
    outcome,
)
from harness.report.model import Section, Table


def _f(value: float | None, sign: bool = True) -> str:
    if value is None:
        return "-"
    return f"{value:+.4f}" if sign else f"{value:.4f}"


def confirmatory(ctx: Context, s: Section, with_charts: bool) -> None:
    plan = ctx.inputs.analysis
    assert plan is not None
    results = endpoint_results(ctx, plan)
    gates = gate_readings(ctx, plan, results)
    ceilings = ceiling_readings(ctx, plan)
    verdict, why = outcome(plan, results, gates, ceilings)
    s.paragraphs.append(f"OUTCOME: {verdict} ({why}).")
    level = 1 - 2 * plan.alpha
    s.paragraphs.append(
        f"Confirmatory verdicts under the analysis plan SHA-256 {plan.sha256}: one-sided tests at "
        f"alpha {plan.alpha:g}, Holm across the declared family, cluster bootstrap "
        f"({plan.resamples} resamples, seed {plan.seed}); the interval is the {level:.0%} "
        "percentile interval, whose ends are the one-sided bounds. Roles: "
        + ", ".join(f"{role} = {arm}" for role, arm in sorted(plan.arms.items()))
        + "."
    )
    rows, bars = [], []
    for r in results:
        p, adj = r.p or {}, r.adjusted or {}
        tests = " / ".join(
            f"{p[t]:.4g} ({adj[t]:.4g})" if t in p else "-"
            for t in ("better", "non-inferior", "worse")
        )
        controlled = "-"
        if r.controlled is not None:
            c = r.controlled
            controlled = f"{c[0]:+.4f} [{c[1]:+.4f}, {c[2]:+.4f}]"
        elif r.length_ratio is not None and r.length_ratio >= LONGER:
            controlled = "lengths never differ within a pair: not estimable"
        ratio = "-" if r.length_ratio is None else f"{r.length_ratio:.2f}"
        rows.append(
            [
                r.contrast,
                r.endpoint.name,
                r.endpoint.metric,
                "yes" if r.endpoint.family else "no",
                f"{r.endpoint.planned_n} / {r.n}",
                _f(r.estimate),
                "-" if r.low is None else f"[{r.low:+.4f}, {r.high:+.4f}]",
                f"{r.endpoint.margin:g}",
                tests,
                _f(r.mde, sign=False),
                ratio,
                controlled,
                r.status if r.p is not None else f"NOT SHOWN ({r.why})",
            ]
        )
        if r.estimate is not None and r.low is not None and r.high is not None:
            bars.append((r.endpoint.name, r.contrast, r.estimate, r.low, r.high))
    columns = ["contrast", "endpoint", "metric", "in family", "planned / achieved n",
               "effect (+ = candidate better)", f"{level:.0%} interval", "margin",
               "one-sided p: better / non-inferior / worse (Holm)", "MDE at planned n",
               "winner's length ratio", "length-controlled effect", "status"]  # fmt: skip
    s.tables.append(Table(columns, rows))
    s.tables.append(
        Table(
            ["validity gate", "reading", "detail"],
            [[g.name, g.state, g.detail] for g in gates] or [["none declared", "-", "-"]],
        )
    )
    s.tables.append(
        Table(
            ["ceiling", "reading", "detail"],
            [[c.name, c.state, c.detail] for c in ceilings] or [["none declared", "-", "-"]],
        )
    )
    look = plan.interim
    s.paragraphs.append(
        "Interim look: none declared."
        if look is None
        else f"Interim look at n {look.at_n}: stop for efficacy when every family endpoint's "
        f"Holm-adjusted p (better) is below {look.efficacy_alpha:g}; stop for futility (KILL) "
        f"when a family endpoint's upper bound is below {look.futility_bound:g}."
    )
    s.paragraphs.append(
        "Decision rules (the first that holds): "
        + "; ".join(
            f"{rule.outcome} when {' and '.join(rule.when) or 'always'}" for rule in plan.rules
        )
        + ". A validity gate that failed or was not run gives NO VERDICT first."
    )
    if with_charts and bars:
        s.chart = charts.interval_chart(
            f"Effects (candidate - baseline) with their {level:.0%} intervals", bars, "verdicts"
        )
