"""Sections 6 and 7: results per family, metric and scale, and pairwise verdicts, from the
judgments only (a judgment set or a JSONL file, harness/report/reading/judged.py), with the
confirmatory verdicts of `--analysis` in their own section, "Verdicts", after section 11
(harness/report/confirmatory/section.py).

The generator never judges anything itself (it calls no model): it reads judgments someone else
made (`--judgments`) and computes the statistics in harness/stats (a paired bootstrap over
items as clusters, McNemar for paired right/wrong outcomes, Holm over each family's pairs).
The study's controls (--header `aa_pairs = [["a", "a-again"]]`: the same arm twice; `must_fail =
["scrambled"]`) are checked by harness/stats/controls.py; the report prints every flag of a control
that misbehaves, because then no other verdict of the study can be trusted either.
"""

from __future__ import annotations

from collections import defaultdict
from itertools import combinations

from harness.report import charts
from harness.report.confirmatory import interim_due
from harness.report.context import Context
from harness.report.model import Section, Table
from harness.report.reading import Judgment, PairJudgment
from harness.report.sections.drill_link import drill_href
from harness.report.sections.orientation import better_sign, oriented
from harness.stats import (
    NET_LAMBDAS,
    aa_control,
    discordant_pairs,
    holm,
    mcnemar,
    mean_interval,
    must_fail_control,
    net_sweep,
    paired_cluster_bootstrap,
)

# At an interim look the output reveals only each axis's stop or continue (study design 4.6).
SEALED = (
    "Interim look: the results stay sealed until the final look (the interim output reveals only "
    "each axis's stop or continue)."
)
Unit = tuple[str, int | None]  # (item, turn): one judged answer
Group = tuple[str, str, str]  # (family, metric, scale): never averaged with another


def family_of(ctx: Context, item: str, family: str) -> str:
    """A judgment's family; one without (`all`) takes its item's from the T1 pack, if given."""
    if family == "all" and ctx.inputs.families:
        return ctx.inputs.families.get(item, family)
    return family


def cluster_of(ctx: Context, item: str) -> str:
    """Items are the clusters; with the T1 pack, an item's history (shared by its questions)."""
    return (ctx.inputs.clusters or {}).get(item, item)


def _by_group(
    ctx: Context, judgments: list[Judgment]
) -> dict[Group, dict[str, dict[Unit, Judgment]]]:
    out: dict[Group, dict[str, dict[Unit, Judgment]]] = defaultdict(lambda: defaultdict(dict))
    for j in judgments:
        group = (family_of(ctx, j.item, j.family), j.metric, j.scale)
        out[group][j.arm][(j.item, j.turn)] = j  # unique: crosscheck refused a second one
    return out


def kept_judgments(ctx: Context) -> list[Judgment]:
    """Judgments of the items every arm ran, by arms a scan did not void."""
    dropped = set(ctx.report.dropped_items)
    void = set(ctx.inputs.void_arms or {})
    return [j for j in ctx.inputs.judgments or [] if j.item not in dropped and j.arm not in void]


def kept_pairs(ctx: Context) -> list[PairJudgment]:
    dropped = set(ctx.report.dropped_items)
    void = set(ctx.inputs.void_arms or {})
    return [
        p for p in ctx.inputs.pairs or []
        if p.item not in dropped and p.arm_a not in void and p.arm_b not in void
    ]  # fmt: skip


def _void_note(ctx: Context) -> list[str]:
    return [
        f"{arm} is VOID (harness scan: {'; '.join(why)}): left out of every result and verdict."
        for arm, why in sorted((ctx.inputs.void_arms or {}).items())
    ]


def _clusters_note(ctx: Context) -> str:
    if ctx.inputs.clusters is None:
        return "items as clusters"
    return f"the T1 pack's histories as clusters ({len(set(ctx.inputs.clusters.values()))})"


def results(ctx: Context, with_charts: bool = False) -> Section:
    s = Section(6, read=ctx.input_file("judgments") + ctx.input_file("gold"))
    s.read += ctx.input_file("scan") + ctx.input_file("pack")
    if ctx.inputs.judgments is None:
        s.not_run = "no --judgments or --gold were given"
        return s
    if interim_due(ctx):
        s.paragraphs.append(SEALED)
        return s
    rows, bars = [], []
    for (family, metric, scale), arms in sorted(_by_group(ctx, kept_judgments(ctx)).items()):
        for arm, units in sorted(arms.items()):
            keys = sorted(units, key=str)
            values = [units[k].value for k in keys]
            clusters = [cluster_of(ctx, k[0]) for k in keys]
            iv = mean_interval(values, clusters, ctx.resamples, ctx.seed, 0.95)
            interval = f"[{iv.low:.4f}, {iv.high:.4f}]"
            rows.append(
                [family, metric, scale, arm, str(len(values)), f"{iv.estimate:.4f}", interval]
            )
            bars.append((f"{metric} ({family})", arm, iv.estimate, iv.low, iv.high))
    columns = ["family", "metric", "scale", "arm", "judged answers", "mean", "95% interval"]
    drill = not ctx.anon.public
    links = [drill_href(f"{r[1]}") if drill else None for r in rows]
    s.tables.append(Table(columns, rows, links))
    pair_rows = []
    for p_group, pairs in sorted(_pairs_by_group(ctx).items()):
        family, metric, arm_a, arm_b = p_group
        values = [p.value for p in pairs]
        iv = mean_interval(
            values, [cluster_of(ctx, p.item) for p in pairs], ctx.resamples, ctx.seed
        )
        axis = sorted({p.axis for p in pairs})
        interval = f"[{iv.low:.4f}, {iv.high:.4f}]"
        pair_rows.append(
            [family, metric, f"{arm_a} vs {arm_b}", str(len(values)), f"{iv.estimate:.4f}",
             interval, ", ".join(axis)]
        )  # fmt: skip
        bars.append((f"{metric} ({family})", f"{arm_a} over {arm_b}", iv.estimate, iv.low, iv.high))
    if pair_rows:
        columns = ["family", "metric (win_share)", "pair", "judged turns",
                   "first arm's share of votes", "95% interval", "axis"]  # fmt: skip
        pair_links = [drill_href(r[1]) if drill else None for r in pair_rows]
        s.tables.append(Table(columns, pair_rows, pair_links))
    s.paragraphs.append(
        f"Each metric on its own declared scale, never averaged with another. Intervals: "
        f"percentile bootstrap, {_clusters_note(ctx)}, {ctx.resamples} resamples, seed {ctx.seed}."
    )
    if ctx.inputs.set_aside:
        s.paragraphs.append(
            f"Set aside by the judging stage (no full vote set): {', '.join(ctx.inputs.set_aside)}."
        )
    if not ctx.anon.public:
        s.paragraphs.append(
            "Per-item drill-down (each item's answers, votes and outcome): drilldown.html."
        )
    s.paragraphs += _void_note(ctx)
    if ctx.inputs.net:
        s.tables.append(_net_table(ctx))
    if with_charts and bars:
        s.chart = charts.interval_plots("Means with their 95% intervals", bars, "results")
    return s


def _pairs_by_group(ctx: Context) -> dict[tuple[str, str, str, str], list[PairJudgment]]:
    out: dict[tuple[str, str, str, str], list[PairJudgment]] = defaultdict(list)
    for p in sorted(kept_pairs(ctx), key=lambda p: (p.item, p.turn, p.run)):
        out[(family_of(ctx, p.item, p.family), p.metric, p.arm_a, p.arm_b)].append(p)
    return out


def _net_table(ctx: Context) -> Table:
    """NET(λ) = (right - λ·wrong) / n of the judge-free scores, abstentions counted in n."""
    void = set(ctx.inputs.void_arms or {})
    rows = []
    for (family, arm), verdicts in sorted((ctx.inputs.net or {}).items()):
        if arm in void:
            continue
        sweep = net_sweep(verdicts)
        be = "-" if sweep.break_even is None else f"{sweep.break_even:.3g}"
        counts = [str(sweep.right), str(sweep.wrong), str(sweep.abstained)]
        rows.append([family, arm, *counts, *(f"{v:+.3f}" for v in sweep.net.values()), be])
    lams = [f"NET({lam:g})" for lam in NET_LAMBDAS]
    return Table(["family", "arm", "right", "wrong", "abstained", *lams, "break-even λ"], rows)


def verdicts(ctx: Context, with_charts: bool = False) -> Section:
    s = Section(7, read=ctx.input_file("analysis") + ctx.input_file("judgments"))
    s.read += ctx.input_file("gold") + ctx.input_file("header") + ctx.input_file("scan")
    s.read += ctx.input_file("pack")
    if ctx.inputs.judgments is None:
        s.not_run = "no --judgments or --gold were given"
        return s
    if ctx.inputs.analysis is None:
        s.paragraphs.append("Confirmatory verdicts: not run (no --analysis was given).")
    else:
        s.paragraphs.append(
            'Confirmatory verdicts: the section "Verdicts" after section 11 (the outcome under '
            "the analysis plan's decision rules)."
        )
        if interim_due(ctx):
            s.paragraphs.append(SEALED)
            return s
    rows, flags = [], []
    for (family, metric, scale), arms in sorted(_by_group(ctx, kept_judgments(ctx)).items()):
        found, pvalues = [], {}
        sign = better_sign(ctx, metric, scale)
        for pair in combinations(sorted(arms), 2):
            a, b = oriented(ctx, *pair)  # + = a better, as in the Verdicts
            shared = _shared(arms, [a, b])
            if not shared:
                continue
            xa, xb = _values(arms[a], shared), _values(arms[b], shared)
            clusters = [cluster_of(ctx, i) for i in _items(shared)]
            better, worse = (xa, xb) if sign > 0 else (xb, xa)
            iv = paired_cluster_bootstrap(better, worse, clusters, ctx.resamples, ctx.seed)
            name = f"{a} - {b}"
            if scale == "0/1":
                pvalues[name] = mcnemar(*discordant_pairs([x > 0 for x in xa], [x > 0 for x in xb]))
            found.append((name, a, b, len(shared), iv))
        adjusted = holm(pvalues) if pvalues else {}
        for name, a, b, n, iv in found:
            p = adjusted.get(name)
            significant = not iv.contains(0.0) and (p is None or p < 0.05)
            winner = a if iv.estimate > 0 else b
            verdict = f"{winner} better" if significant else "no difference shown"
            pvalue = "-" if p is None else f"{p:.4g}"
            interval = f"[{iv.low:+.4f}, {iv.high:+.4f}]"
            rows.append(
                [family, metric, name, str(n), f"{iv.estimate:+.4f}", interval, pvalue, verdict]
            )
        flags += [f"{family} / {metric}: {flag}" for flag in _controls(ctx, arms)]
    for (family, metric, arm_a, arm_b), pairs in sorted(_pairs_by_group(ctx).items()):
        first, second = oriented(ctx, arm_a, arm_b)
        # The first arm's share of the votes minus one half: + = the first arm preferred.
        values = [(p.value if first == arm_a else 1 - p.value) - 0.5 for p in pairs]
        iv = mean_interval(
            values, [cluster_of(ctx, p.item) for p in pairs], ctx.resamples, ctx.seed
        )
        winner = first if iv.estimate > 0 else second
        verdict = f"{winner} preferred" if iv.excludes_zero else "no difference shown"
        rows.append([family, metric, f"{first} - {second}", str(len(values)),
                     f"{iv.estimate:+.4f}", f"[{iv.low:+.4f}, {iv.high:+.4f}]", "-",
                     verdict])  # fmt: skip
    columns = ["family", "metric", "pair", "paired answers", "difference (+ = first better)",
               "95% interval", "Holm p", "verdict"]  # fmt: skip
    s.tables.append(Table(columns, rows))
    s.paragraphs.append(
        "The last table holds the exploratory pairs (every two arms, per family and metric, "
        "outside any decision rule): paired cluster bootstrap; "
        "McNemar with Holm for 0/1 metrics. Every difference reads + = the first arm better "
        "(a flag rate's sign flipped, since fewer flags is better), the pair in the analysis "
        "plan's order (candidate - reference) where a contrast names both, as in the Verdicts; "
        "a pairwise metric's difference is the first arm's share of the votes minus one half."
    )
    s.paragraphs += flags or ["Controls: none misbehaved (or none declared in --header)."]
    s.paragraphs += _void_note(ctx)
    return s


def _shared(arms: dict[str, dict[Unit, Judgment]], names: list[str]) -> list[Unit]:
    units = set.intersection(*(set(arms[n]) for n in names))
    return sorted(units, key=str)


def _values(units: dict[Unit, Judgment], shared: list[Unit]) -> list[float]:
    return [units[u].value for u in shared]


def _items(shared: list[Unit]) -> list[str]:
    return [u[0] for u in shared]


def _controls(ctx: Context, arms: dict[str, dict[Unit, Judgment]]) -> list[str]:
    """The study's declared controls (--header `aa_pairs`, `must_fail`), by harness/stats."""
    flags = []
    for pair in ctx.inputs.header.get("aa_pairs") or []:
        first, second = (str(x) for x in pair)
        if first in arms and second in arms and (shared := _shared(arms, [first, second])):
            result = aa_control(
                first, _values(arms[first], shared), _values(arms[second], shared),
                _items(shared), resamples=ctx.resamples, seed=ctx.seed,
            )  # fmt: skip
            flags += result.flags
    for control in (str(x) for x in ctx.inputs.header.get("must_fail") or []):
        others = [n for n in arms if n != control]
        if control not in arms or not others or not (shared := _shared(arms, [control, *others])):
            continue
        result = must_fail_control(
            control, _values(arms[control], shared),
            {n: _values(arms[n], shared) for n in others},
            _items(shared), resamples=ctx.resamples, seed=ctx.seed,
        )  # fmt: skip
        flags += result.flags
    return flags
