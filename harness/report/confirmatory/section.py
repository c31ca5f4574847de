"""The confirmatory analysis's own section, "Verdicts", after the spend ledger (study design,
Appendix A; only with --analysis: a run's report applies no decision rule): the analysis plan's
hash, each contrast and endpoint with its interval, tests (superiority Holm-adjusted;
non-inferiority and WORSE unadjusted), win conditions, status, planned and achieved n and
minimum detectable effect, the length-controlled estimate where it applies, the validity gates'
and ceilings' readings, the interim look and the outcome (harness/report/confirmatory/decision.py).
At an interim look that does not stop every axis, the section shows each axis's "stop" or "continue"
and nothing of any effect. Then B - A and C - A on every endpoint, as descriptions with no
outcome ("not measured" where no judged pair covers a contrast on an axis judged only in
pairs)."""

from __future__ import annotations

from harness.report import charts
from harness.report.confirmatory.decision import (
    LONGER,
    EndpointResult,
    endpoint_results,
    interim_due,
    outcome,
    units,
)
from harness.report.confirmatory.readings import ceiling_readings, gate_readings
from harness.report.confirmatory.record import confirmed_record
from harness.report.context import Context
from harness.report.model import VERDICTS_NUMBER, Section, Table
from harness.report.reading import Analysis, Endpoint
from harness.stats import onesided


def _f(value: float | None, sign: bool = True) -> str:
    if value is None:
        return "-"
    return f"{value:+.4f}" if sign else f"{value:.4f}"


VERDICTS = VERDICTS_NUMBER  # its number; placed after section 11 (Appendix A)
DESCRIBED = ("B - A", "C1 - A", "C0 - A")  # contrasts described, with no outcome


def verdicts_section(ctx: Context, with_charts: bool) -> Section:
    s = Section(VERDICTS, read=ctx.input_file("analysis") + ctx.input_file("judgments"))
    s.read += ctx.input_file("pack")
    if ctx.inputs.judgments is None:
        s.not_run = "no --judgments or --gold were given"
        return s
    confirmatory(ctx, s, with_charts)
    if not interim_due(ctx):
        _descriptions(ctx, s)
    return s


def _descriptions(ctx: Context, s: Section) -> None:
    plan = ctx.inputs.analysis
    assert plan is not None
    if "A" not in plan.arms:
        s.paragraphs.append("B - A and C - A: not run (the plan's [arms] names no A role).")
        return
    paired = {p.metric for p in ctx.inputs.pairs or []}
    rows = []
    for contrast in DESCRIBED:
        cand_role, base_role = contrast.split(" - ")
        if cand_role not in plan.arms:
            continue
        for ep in plan.endpoints:
            u = units(ctx, ep, plan.arms[cand_role], plan.arms[base_role])
            if not u.effects:
                why = "not measured" if ep.metric in paired else "no judged data"
                rows.append([contrast, ep.name, ep.metric, "0", why, "-"])
                continue
            estimate, reps = onesided.cluster_replicates(
                u.effects, u.clusters, plan.resamples, plan.seed
            )
            low, high = onesided.bounds(reps, 0.025)
            rows.append([contrast, ep.name, ep.metric, str(len(set(u.clusters))),
                         f"{estimate:+.4f}", f"[{low:+.4f}, {high:+.4f}]"])  # fmt: skip
    columns = ["description", "endpoint", "metric", "clusters", "effect (+ = first arm better)",
               "95% interval"]  # fmt: skip
    s.tables.append(Table(columns, rows))
    s.paragraphs.append(
        "B - A and C - A are descriptions outside the family, with no outcome; C - A is never "
        "added to A - Z."
    )


def confirmatory(ctx: Context, s: Section, with_charts: bool) -> None:
    plan = ctx.inputs.analysis
    assert plan is not None
    results = endpoint_results(ctx, plan)
    gates = gate_readings(ctx, plan, results)
    ceilings = ceiling_readings(ctx, plan)
    verdict, why = outcome(plan, results, gates, ceilings)
    ctx.confirmed = confirmed_record(verdict, why, results, gates, ceilings)
    s.paragraphs.append(f"OUTCOME: {verdict} ({why}).")
    if why.endswith(": continue"):
        _interim_only(plan, results, s)
        return
    level = 1 - 2 * plan.alpha
    s.paragraphs.append(
        f"Confirmatory verdicts under the analysis plan SHA-256 {plan.sha256}: one-sided tests at "
        f"alpha {plan.alpha:g}, Holm across the declared family, cluster bootstrap "
        f"({plan.resamples} resamples, seed {plan.seed}); the interval is the {level:.0%} "
        "percentile interval, whose ends are the one-sided bounds. Roles: "
        + ", ".join(f"{role} = {arm}" for role, arm in sorted(plan.arms.items()))
        + "."
    )
    columns = ["contrast", "endpoint", "metric", "in family", "planned / achieved n",
               "effect (+ = candidate better)", f"{level:.0%} interval",
               "margins: non-inferiority / sizing",
               "p: better (Holm) / non-inferior / worse (two-sided)", "win conditions",
               "MDE at planned n",
               "winner's length ratio", "length-controlled effect", "status"]  # fmt: skip
    s.tables.append(Table(columns, [_result_row(r) for r in results]))
    for name, readings in (("validity gate", gates), ("ceiling", ceilings)):
        s.tables.append(
            Table(
                [name, "reading", "detail"],
                [[g.name, g.state, g.detail] for g in readings] or [["none declared", "-", "-"]],
            )
        )
    s.paragraphs += _how_read(plan)
    bars = [
        (f"{r.contrast} {r.endpoint.name}", r.estimate, r.low, r.high,
         None if r.endpoint.superiority_only else r.endpoint.margin)
        for r in results
        if r.estimate is not None and r.low is not None and r.high is not None
    ]  # fmt: skip
    if with_charts and bars:
        s.chart = charts.forest_plot(
            f"Effects (+ = candidate better), {level:.0%} intervals; dashed: minus the margin",
            bars,
            "verdicts",
        )


def _result_row(r: EndpointResult) -> list[str]:
    """One contrast on one endpoint: its effect, interval, tests, win conditions and status."""
    p, adj = r.p or {}, r.adjusted or {}
    tests = (
        f"{p['better']:.4g} ({adj['better']:.4g}) / {p['non-inferior']:.4g} / {p['worse']:.4g}"
        if p
        else "-"
    )
    win = "; ".join(f"{name}: {'yes' if ok else 'no'}" for name, ok in r.win.items())
    controlled = "-"
    if r.controlled is not None:
        c = r.controlled
        controlled = f"{c[0]:+.4f} [{c[1]:+.4f}, {c[2]:+.4f}]"
    elif r.length_ratio is not None and r.length_ratio >= LONGER:
        controlled = "lengths never differ within a pair: not estimable"
    return [
        r.contrast,
        r.endpoint.name,
        r.endpoint.metric,
        "yes" if r.endpoint.family else "no",
        f"{r.endpoint.planned_n} / {r.n}",
        _f(r.estimate),
        "-" if r.low is None else f"[{r.low:+.4f}, {r.high:+.4f}]",
        _margins(r.endpoint),
        tests,
        win or "-",
        _f(r.mde, sign=False),
        "-" if r.length_ratio is None else f"{r.length_ratio:.2f}",
        controlled,
        (f"{r.status} ({r.why})" if r.why else r.status),
    ]


def _how_read(plan: Analysis) -> list[str]:
    """The interim look and the reading of each status and rule, as the plan declares them."""
    look = plan.interim
    return [
        "Interim look: none declared."
        if look is None
        else f"Interim look at n {look.at_n}: an axis stops for efficacy or harm at |z| >= "
        f"{look.z:g}, and for futility when its upper 95% bound is below its sizing margin and "
        "its estimate is at most 0; the interim output says only stop or continue.",
        "BETTER: the one-sided lower bound above 0 (0.5 for a pair score), Holm-adjusted across "
        "the family (a pair served by reuse counted once), and every win condition the endpoint "
        "declares; WORSE: the unadjusted two-sided 95% upper bound below 0; NON-INFERIOR: the "
        "unadjusted one-sided lower bound above minus the margin. Decision rules (the first "
        "that holds): "
        + "; ".join(
            f"{rule.outcome} when {' and '.join(rule.when) or 'always'}" for rule in plan.rules
        )
        + ". A validity gate that failed or was not run gives NO VERDICT first.",
    ]


def _margins(ep: Endpoint) -> str:
    ni = "none (superiority only)" if ep.superiority_only else f"{ep.margin:g}"
    return f"{ni} / {'-' if ep.sizing_margin is None else f'{ep.sizing_margin:g}'}"


def _interim_only(plan: Analysis, results: list[EndpointResult], s: Section) -> None:
    """What an interim look that does not stop every axis may show: stop or continue."""
    rows = [
        [r.contrast, r.endpoint.name, r.interim.decision] for r in results if r.interim is not None
    ]
    s.tables.append(Table(["contrast", "endpoint", "interim look"], rows))
    s.paragraphs.append(
        f"Interim look under the analysis plan SHA-256 {plan.sha256}: each axis reads only "
        "stop or continue; its estimate, interval and verdict stay sealed until the final look."
    )
