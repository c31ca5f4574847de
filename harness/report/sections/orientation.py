"""One orientation for every difference the report prints: + = the candidate better.

The confirmatory verdicts read "candidate - reference" as the analysis plan's contrasts name
them (C1 - B), on each endpoint's own direction (a flag rate is better lower). The exploratory
pairs used to read "first arm in name order minus second", so the same data could print -0.70
there beside +0.70 in the Verdicts. Here a pair of arms is put in the plan's order when a
contrast names both (else in name order), and a difference is signed so that + means the
first arm did better: a flag rate's sign is flipped, as it is in the verdicts."""

from __future__ import annotations

from harness.report.context import Context


def oriented(ctx: Context, a: str, b: str) -> tuple[str, str]:
    """(first, second): the plan's candidate and reference when a contrast names both arms."""
    plan = ctx.inputs.analysis
    if plan is not None:
        for contrast in plan.contrasts:
            candidate, _, reference = contrast.partition(" - ")
            arms = (plan.arms.get(candidate), plan.arms.get(reference.strip()))
            if arms == (a, b) or arms == (b, a):
                return str(arms[0]), str(arms[1])
    return (a, b) if a <= b else (b, a)


def better_sign(ctx: Context, metric: str, scale: str) -> float:
    """+1 when a higher value is better, -1 when lower is (a flag rate, or the plan says so)."""
    plan = ctx.inputs.analysis
    if plan is not None:
        for endpoint in plan.endpoints:
            if endpoint.metric == metric:
                return 1.0 if endpoint.higher_is_better else -1.0
    return -1.0 if scale == "flag_share" else 1.0
