"""The validity gates' and the ceilings' readings for the confirmatory verdicts
(harness/report/confirmatory/decision.py): each gate the analysis plan declares (judges, aa,
stability, determinism, n) passed, failed or not run; each ceiling held, broken or not read."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from harness.report.context import Context
from harness.report.reading import Analysis, Endpoint


class Measured(Protocol):
    """What the n gate reads of an endpoint's result (harness/report/confirmatory/decision.py's
    EndpointResult; named by its fields so decision.py, which imports this module, is not
    imported back)."""

    contrast: str
    endpoint: Endpoint
    n: int


@dataclass
class Reading:
    name: str
    state: str  # passed, failed, not run (gates); held, broken, not read (ceilings)
    detail: str


def gate_readings(ctx: Context, plan: Analysis, results: Sequence[Measured]) -> list[Reading]:
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
        if c.measure == "cost_per_turn" and ctx.report.mode == "record":
            # Stubs answer a record run at no cost: $0 against $0 says nothing about the arms'
            # money, so the ceiling is not read and no rule that needs it can fire on stub data.
            out.append(Reading(c.name, "not read", "record mode: stubs cost nothing"))
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
