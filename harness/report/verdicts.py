"""Sections 6 and 7: results per family and pairwise verdicts, from the judgments file only.

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

from harness.report.context import Context
from harness.report.inputs import Judgment
from harness.report.model import Section, Table
from harness.stats.bootstrap import mean_interval, paired_cluster_bootstrap
from harness.stats.controls import aa_control, must_fail_control
from harness.stats.scorers import NET_LAMBDAS, net_sweep
from harness.stats.significance import discordant_pairs, holm, mcnemar

Unit = tuple[str, int | None]  # (item, turn): one judged answer


def _by_family(judgments: list[Judgment]) -> dict[str, dict[str, dict[Unit, Judgment]]]:
    out: dict[str, dict[str, dict[Unit, Judgment]]] = defaultdict(lambda: defaultdict(dict))
    for j in judgments:
        out[j.family][j.arm][(j.item, j.turn)] = j
    return out


def _kept(ctx: Context) -> list[Judgment]:
    """Judgments of the items every arm ran, by arms a scan did not void."""
    dropped = set(ctx.report.dropped_items)
    void = set(ctx.inputs.void_arms or {})
    return [j for j in ctx.inputs.judgments or [] if j.item not in dropped and j.arm not in void]


def _void_note(ctx: Context) -> list[str]:
    return [
        f"{arm} is VOID (harness scan: {'; '.join(why)}): left out of every result and verdict."
        for arm, why in sorted((ctx.inputs.void_arms or {}).items())
    ]


def results(ctx: Context) -> Section:
    s = Section(6, read=ctx.input_file("judgments") + ctx.input_file("gold"))
    s.read += ctx.input_file("scan")
    if ctx.inputs.judgments is None:
        s.not_run = "no --judgments or --gold were given"
        return s
    rows = []
    for family, arms in sorted(_by_family(_kept(ctx)).items()):
        for arm, units in sorted(arms.items()):
            keys = sorted(units, key=str)
            values = [units[k].value for k in keys]
            iv = mean_interval(values, [k[0] for k in keys], ctx.resamples, ctx.seed, 0.95)
            rows.append(
                [
                    family,
                    arm,
                    str(len(values)),
                    f"{iv.estimate:.4f}",
                    f"[{iv.low:.4f}, {iv.high:.4f}]",
                ]
            )
    columns = ["family", "arm", "judged answers", "mean", "95% interval (items as clusters)"]
    s.tables.append(Table(columns, rows))
    s.paragraphs.append(
        f"Intervals: percentile bootstrap over items, {ctx.resamples} resamples, seed {ctx.seed}."
    )
    s.paragraphs += _void_note(ctx)
    if ctx.inputs.net:
        s.tables.append(_net_table(ctx))
    return s


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


def verdicts(ctx: Context) -> Section:
    s = Section(7, read=ctx.input_file("judgments") + ctx.input_file("gold"))
    s.read += ctx.input_file("header") + ctx.input_file("scan")
    if ctx.inputs.judgments is None:
        s.not_run = "no --judgments or --gold were given"
        return s
    rows, flags = [], []
    for family, arms in sorted(_by_family(_kept(ctx)).items()):
        found, pvalues = [], {}
        for a, b in combinations(sorted(arms), 2):
            shared = _shared(arms, [a, b])
            if not shared:
                continue
            xa, xb = _values(arms[a], shared), _values(arms[b], shared)
            iv = paired_cluster_bootstrap(xa, xb, _items(shared), ctx.resamples, ctx.seed)
            name = f"{a} vs {b}"
            if all(arms[a][u].binary and arms[b][u].binary for u in shared):
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
            rows.append([family, name, str(n), f"{iv.estimate:+.4f}", interval, pvalue, verdict])
        flags += [f"{family}: {flag}" for flag in _controls(ctx, arms)]
    columns = [
        "family",
        "pair",
        "paired answers",
        "difference",
        "95% interval",
        "Holm p",
        "verdict",
    ]
    s.tables.append(Table(columns, rows))
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
