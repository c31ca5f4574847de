"""`harness plan simulate PLAN` (harness/report/confirmatory/simulate.py): the vectorised simulation
agrees, within Monte Carlo error, with a slow reference written plainly (one study at a time, the
standard library's normal distribution, the documented rule functions); a one-endpoint plan's
P(GO) is the power statsmodels computes; the command is seeded and names a plan it cannot read."""

from __future__ import annotations

import math
import os
import random
import subprocess
import sys
from collections.abc import Hashable
from pathlib import Path
from statistics import NormalDist, fmean, stdev

import pytest
from statsmodels.stats.power import NormalIndPower

from harness.report.confirmatory.conditions import Verdict, holds
from harness.report.confirmatory.simulate import Scenario, scenarios, simulate_studies
from harness.report.reading.analysis import Analysis, load_analysis
from harness.stats import rules

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "judged" / "analysis.toml"

# Two contrasts, a pair served by reuse, a superiority-only endpoint, a guard outside the
# family, leave one out and an interim look: every rule the simulation reads.
PLAN = """schema = 1
alpha = 0.05
seed = 11
contrasts = ["C1 - B", "C0 - B"]
[arms]
B = "b"
C0 = "c0"
C1 = "c1"
[[endpoints]]
name = "Q1"
metric = "q"
margin = 0.08
sizing_margin = 0.08
planned_n = 40
leave_one_out = true
planning_sd = 0.2
[[endpoints]]
name = "X1"
metric = "x"
margin = 0.08
sizing_margin = 0.08
planned_n = 30
served_by_reuse = true
planning_sd = 0.15
[[endpoints]]
name = "S1"
metric = "s"
margin = 0.0
sizing_margin = 0.15
superiority_only = true
planned_n = 30
planning_sd = 0.3
[[endpoints]]
name = "G1"
metric = "g"
margin = 0.1
planned_n = 30
family = false
planning_sd = 0.3
[interim]
at_n = 15
[[rules]]
outcome = "KILL"
when = ["any C1 - B WORSE"]
[[rules]]
outcome = "KILL"
when = ["no C1 - B BETTER", "all C1 - B BELOW-SIZING"]
[[rules]]
outcome = "GO"
when = [
    "any C1 - B BETTER",
    "all C1 - B BETTER|NON-INFERIOR except S1",
    "no C1 - B WORSE on S1,G1",
]
[[rules]]
outcome = "NOT SHOWN"
when = []
"""

Z = NormalDist()


def _read(values: list[float], alpha: float) -> dict[str, float]:
    estimate = fmean(values)
    se = stdev(values) / math.sqrt(len(values))
    z = estimate / se if se > 0 else math.copysign(math.inf, estimate)
    return {
        "estimate": estimate,
        "se": se,
        "p": 1 - Z.cdf(z) if math.isfinite(z) else float(z < 0),
        "lower": estimate - Z.inv_cdf(1 - alpha) * se,
        "upper": estimate + Z.inv_cdf(rules.WORSE_LEVEL) * se,
    }


def _statuses(plan: Analysis, data: dict[tuple[str, str], list[float]]) -> dict:
    eps = {ep.name: ep for ep in plan.endpoints}
    read = {axis: _read(values, plan.alpha) for axis, values in data.items()}
    family: dict[Hashable, float] = {a: read[a]["p"] for a in read if eps[a[1]].family}
    same = [
        [a for a in read if a in family and a[1] == ep.name]
        for ep in plan.endpoints
        if ep.served_by_reuse
    ]
    adjusted = rules.holm_once(family, same)
    out = {}
    for axis, r in read.items():
        ep = eps[axis[1]]
        failed = []
        clusters = list(range(len(data[axis])))
        if ep.leave_one_out and not rules.sign_kept_leaving_one_out(data[axis], clusters):
            failed.append("leave one out")
        status = rules.status(
            adjusted.get(axis, r["p"]) < plan.alpha,
            rules.is_worse(r["upper"]),
            rules.is_non_inferior(r["lower"], ep.margin),
            ep.superiority_only,
            failed,
        )
        out[axis] = (status, rules.below_sizing(r["upper"], ep.sizing_margin), r, failed)
    return out


def reference_go(plan: Analysis, scenario: Scenario, sims: int, seed: int) -> float:
    """The slow, plain simulation: one study at a time."""
    rnd = random.Random(seed)
    eps = {ep.name: ep for ep in plan.endpoints}
    go = 0
    for _ in range(sims):
        data = {
            (c, ep.name): [
                rnd.gauss(scenario.shift.get((c, ep.name), 0.0), ep.planning_sd or 0.0)
                for _ in range(ep.planned_n)
            ]
            for c in plan.contrasts
            for ep in plan.endpoints
        }
        final = {a: (s, b) for a, (s, b, _, _) in _statuses(plan, data).items()}
        if plan.interim is not None:
            early = _statuses(plan, {a: v[: plan.interim.at_n] for a, v in data.items()})
            for axis, (status, below, r, failed) in early.items():
                look = rules.interim_reading(
                    r["estimate"], r["se"], r["upper"], eps[axis[1]].sizing_margin, plan.interim.z
                )
                if look.reason == "efficacy":
                    final[axis] = ("NOT SHOWN" if failed else "BETTER", below)
                elif look.reason == "harm":
                    final[axis] = ("WORSE", below)
                elif look.reason == "futility":
                    final[axis] = (status, below)
        verdicts = [Verdict(c, e, eps[e].family, s, b) for (c, e), (s, b) in final.items()]
        ceilings = {c.name: "held" for c in plan.ceilings}
        for rule in plan.rules:
            if all(holds(cond, verdicts, True, ceilings) for cond in rule.when):
                go += rule.outcome == "GO"
                break
    return go / sims


def _plan(tmp_path: Path, text: str = PLAN) -> Analysis:
    path = tmp_path / "analysis.toml"
    path.write_text(text)
    return load_analysis(path)


@pytest.mark.parametrize("which", ["crafted", "example"])
def test_the_simulation_agrees_with_a_plain_reference(tmp_path: Path, which: str) -> None:
    plan = _plan(tmp_path) if which == "crafted" else load_analysis(EXAMPLE)
    fast_n, slow_n = 2000, 400
    for scenario in scenarios(plan):
        fast = float((simulate_studies(plan, scenario, fast_n, 5) == "GO").mean())
        slow = reference_go(plan, scenario, slow_n, 5)
        p = (fast * fast_n + slow * slow_n) / (fast_n + slow_n)
        error = math.sqrt(max(p * (1 - p), 0.01 * 0.99) * (1 / fast_n + 1 / slow_n))
        assert abs(fast - slow) <= 4 * error, (scenario.name, fast, slow)


def test_one_endpoint_without_a_look_has_the_power_statsmodels_gives(tmp_path: Path) -> None:
    one = PLAN.split("[[endpoints]]")[0] + "\n".join(
        [
            "[[endpoints]]",
            'name = "Q1"\nmetric = "q"\nmargin = 0.08\nsizing_margin = 0.05',
            "planned_n = 400\nplanning_sd = 0.4",
            '[[rules]]\noutcome = "GO"\nwhen = ["any C1 - B BETTER"]',
            '[[rules]]\noutcome = "NOT SHOWN"\nwhen = []',
        ]
    )
    plan = _plan(tmp_path, one.replace('["C1 - B", "C0 - B"]', '["C1 - B"]'))
    better = next(s for s in scenarios(plan) if s.kind == "better")
    got = float((simulate_studies(plan, better, 8000, 3) == "GO").mean())
    power = NormalIndPower().power(0.05 / 0.4, 400, 0.05, ratio=0, alternative="larger")
    assert abs(got - power) < 4 * math.sqrt(power * (1 - power) / 8000) + 0.01


def _harness(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HARNESS_LOG_LEVEL": "warning"}
    command = [sys.executable, "-m", "harness.cli", *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT, check=False)


def test_the_command_prints_the_figures_seeded(tmp_path: Path) -> None:
    first = _harness("plan", "simulate", str(EXAMPLE), "--sims", "1000")
    assert first.returncode == 0, first.stderr
    lines = first.stdout.splitlines()
    assert lines[1].startswith("P(GO | every endpoint equal) = ")
    assert any(x.startswith("P(GO | preference better by 0.08) = ") for x in lines)
    assert any(x.startswith("MDE preference: 0.1966 at 80% power, n 10") for x in lines)
    assert lines[-2:] == [
        "target P(GO | one better) >= 0.80: NOT met",
        "target P(GO | all equal) <= 0.05: met",
    ]
    assert _harness("plan", "simulate", str(EXAMPLE), "--sims", "1000").stdout == first.stdout
    assert first.stderr == ""  # no progress line when stderr is not a terminal
    strict = _harness("plan", "simulate", str(EXAMPLE), "--sims", "200", "--strict")
    assert strict.returncode == 1
    bare = tmp_path / "bare.toml"
    bare.write_text(EXAMPLE.read_text().replace("planning_sd = 0.25\n", ""))
    refused = _harness("plan", "simulate", str(bare))
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "endpoint preference has no planning_sd" in refused.stderr
