"""Sections 6 and 7: results per family and pairwise verdicts, from the judgments file only.

The generator never judges anything itself (it calls no model): it reads judgments someone else
made (`--judgments`) and computes the statistics in harness/stats (a paired bootstrap over
items as clusters, McNemar for paired right/wrong outcomes, Holm over each family's pairs).
A/A controls (`aa_pairs` in --header: the same arm twice) must give an interval containing zero,
and an arm marked `must_fail` must do worse than every other arm; the report flags any control
that misbehaves, because then no other verdict of the study can be trusted either.
"""

from __future__ import annotations

from collections import defaultdict
from itertools import combinations

from harness.report.context import Context
from harness.report.inputs import Judgment
from harness.report.model import Section, Table

Unit = tuple[str, int | None]  # (item, turn): one judged answer


def _by_family(judgments: list[Judgment]) -> dict[str, dict[str, dict[Unit, Judgment]]]:
    out: dict[str, dict[str, dict[Unit, Judgment]]] = defaultdict(lambda: defaultdict(dict))
    for j in judgments:
        out[j.family][j.arm][(j.item, j.turn)] = j
    return out


def _kept(ctx: Context) -> list[Judgment]:
    dropped = set(ctx.report.dropped_items)
    return [j for j in ctx.inputs.judgments or [] if j.item not in dropped]


def results(ctx: Context) -> Section:
    s = Section(6, read=ctx.input_file("judgments"))
    if ctx.inputs.judgments is None:
        s.not_run = "no --judgments were given"
        return s
    from harness.stats.bootstrap import mean_interval

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
    return s


def verdicts(ctx: Context) -> Section:
    s = Section(7, read=ctx.input_file("judgments") + ctx.input_file("header"))
    if ctx.inputs.judgments is None:
        s.not_run = "no --judgments were given"
        return s
    from harness.stats.bootstrap import paired_cluster_bootstrap
    from harness.stats.significance import discordant_pairs, holm, mcnemar

    aa = {tuple(sorted(map(str, p))) for p in ctx.inputs.header.get("aa_pairs") or []}
    must_fail = {str(a) for a in ctx.inputs.header.get("must_fail") or []}
    rows, flags = [], []
    for family, arms in sorted(_by_family(_kept(ctx)).items()):
        found, pvalues = [], {}
        for a, b in combinations(sorted(arms), 2):
            shared = sorted(set(arms[a]) & set(arms[b]), key=str)
            if not shared:
                continue
            xa = [arms[a][u].value for u in shared]
            xb = [arms[b][u].value for u in shared]
            iv = paired_cluster_bootstrap(
                xa, xb, [u[0] for u in shared], ctx.resamples, ctx.seed, 0.95
            )
            name = f"{a} vs {b}"
            if all(arms[a][u].binary and arms[b][u].binary for u in shared):
                pvalues[name] = mcnemar(*discordant_pairs([x > 0 for x in xa], [x > 0 for x in xb]))
            found.append((name, a, b, len(shared), iv))
        adjusted = holm(pvalues) if pvalues else {}
        for name, a, b, n, iv in found:
            excludes_zero = iv.low > 0 or iv.high < 0
            p = adjusted.get(name)
            significant = excludes_zero and (p is None or p < 0.05)
            verdict = (
                (a if iv.estimate > 0 else b) + " better" if significant else "no difference shown"
            )
            if (a, b) in aa and excludes_zero:
                flags.append(f"A/A control {name} ({family}) MISBEHAVES: its interval excludes 0.")
            for bad, other, sign in ((a, b, 1), (b, a, -1)):
                if bad in must_fail and sign * iv.estimate >= 0:
                    flags.append(
                        f"must-fail control {bad} ({family}) MISBEHAVES: not worse than {other}."
                    )
            rows.append(
                [
                    family,
                    name,
                    str(n),
                    f"{iv.estimate:+.4f}",
                    f"[{iv.low:+.4f}, {iv.high:+.4f}]",
                    "-" if p is None else f"{p:.4g}",
                    verdict,
                ]
            )
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
    return s
