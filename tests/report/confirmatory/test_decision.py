"""`harness report --analysis`: the confirmatory verdicts of C1 - B and C0 - B under a frozen
plan (one-sided tests, Holm across the family checked against statsmodels, margins), the
length-controlled estimate, validity gates, ceilings, the interim look, the decision rules and the
plan's SHA-256 in the report."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from statsmodels.stats.multitest import multipletests

from harness.errors import HarnessError
from harness.report.confirmatory.decision import endpoint_results
from harness.report.context import Context
from harness.report.figures.perarm import build_report
from harness.report.generate import generate
from harness.report.public import Anonymizer
from harness.report.reading.analysis import Analysis
from harness.report.reading.inputs import load_inputs
from harness.report.reading.rundata import load_runs
from tests.helpers.report_runs import turn, write_run

ITEMS = [f"q{k:02d}" for k in range(20)]
ARMS = {"bare": "B", "lean": "C0", "rich": "C1"}

PLAN = """schema = 1
alpha = 0.05
resamples = 2000
seed = 3
contrasts = ["C1 - B", "C0 - B"]
[arms]
B = "bare"
C0 = "lean"
C1 = "rich"
[[endpoints]]
name = "quality"
metric = "quality"
margin = 0.5
planned_n = PLANNED
[[endpoints]]
name = "violations"
metric = "violation"
higher_is_better = false
margin = 0.1
planned_n = PLANNED
GATES
[[ceilings]]
name = "latency"
measure = "last_token_p95"
role = "C1"
at_most = 1.5
INTERIM
[[rules]]
outcome = "KILL"
when = ["any C1 - B WORSE"]
[[rules]]
outcome = "GO"
when = ["all C1 - B BETTER|NON-INFERIOR", "any C1 - B BETTER", "ceiling latency held"]
[[rules]]
outcome = "GO-COST"
when = ["all C1 - B BETTER|NON-INFERIOR", "any C1 - B BETTER", "ceiling latency broken"]
[[rules]]
outcome = "PORT"
when = ["any C0 - B BETTER"]
[[rules]]
outcome = "NOT SHOWN"
when = []
"""


def study(
    tmp_path: Path, rich_worse: bool = False, rich_slow: float = 1.0, longer: bool = False
) -> tuple[Path, Path]:
    turns = []
    for arm in ARMS:
        for k, item in enumerate(ITEMS):
            for n in range(2):
                # rich writes 10% longer, or (longer) 20 + 3k characters against 10
                text = "x" * (10 if arm != "rich" else 20 + 3 * k if longer else 11)
                last = rich_slow if arm == "rich" else 1.0
                turns.append(turn("r-d", arm, item, n, text=text, last=last))
    run_dir = write_run(tmp_path, "r-d", list(ARMS), turns, [])
    rows = []
    for arm in ARMS:
        for k, item in enumerate(ITEMS):
            for n in range(2):
                base = 2 + (k + n) % 3
                score = base + (1 if arm == "rich" and k % 5 else 0)
                violation = k < 4 or (arm == "lean" and k < 18) or (rich_worse and arm == "rich")
                rows.append({"item": item, "arm": arm, "turn": n, "metric": "quality",
                             "score": score, "scale": "1-5"})  # fmt: skip
                rows.append({"item": item, "arm": arm, "turn": n, "metric": "violation",
                             "correct": violation})  # fmt: skip
    path = tmp_path / "judgments.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return run_dir, path


def plan(tmp_path: Path, planned: int = 20, gates: str = "", interim: str = "") -> Path:
    path = tmp_path / "analysis.toml"
    text = PLAN.replace("PLANNED", str(planned)).replace("GATES", gates)
    path.write_text(text.replace("INTERIM", interim))
    return path


def verdicts(tmp_path: Path, run_dir: Path, judgments: Path, analysis: Path) -> str:
    out = tmp_path / "out"
    inputs = load_inputs(judgments=judgments, analysis=analysis)
    generate([run_dir], inputs, out=out, formats=("md",), resamples=200)
    markdown = (out / "report.md").read_text()
    return markdown.split("\n## 14 Verdicts")[1].split("\n## 12 ")[0]


def context(run_dir: Path, judgments: Path, analysis: Path) -> tuple[Context, Analysis]:
    inputs = load_inputs(judgments=judgments, analysis=analysis)
    data = load_runs([run_dir])
    report = build_report(data, resamples=200, seed=0)
    assert inputs.analysis is not None
    return Context(data, inputs, report, Anonymizer(False), 200, 0), inputs.analysis


def row(section: str, contrast: str, endpoint: str) -> list[str]:
    line = next(x for x in section.splitlines() if x.startswith(f"| {contrast} | {endpoint} |"))
    return [c.strip() for c in line.strip("|").split("|")]


def test_statuses_holm_and_the_outcome(tmp_path: Path) -> None:
    run_dir, judgments = study(tmp_path)
    analysis = plan(tmp_path)
    section = verdicts(tmp_path, run_dir, judgments, analysis)
    sha = hashlib.sha256(analysis.read_bytes()).hexdigest()
    assert f"analysis plan SHA-256 {sha}" in section
    assert row(section, "C1 - B", "quality")[-1] == "BETTER"
    assert row(section, "C1 - B", "violations")[-1] == "NON-INFERIOR"  # the same flags as B
    assert row(section, "C0 - B", "quality")[-1] == "NON-INFERIOR"
    assert row(section, "C0 - B", "violations")[-1] == "WORSE"  # flags 18 of 20 items, B 4
    assert row(section, "C1 - B", "quality")[4] == "20 / 20"
    assert row(section, "C1 - B", "quality")[11:13] == ["1.10", "-"]  # under 20% longer
    assert "OUTCOME: GO (final look at n 20; rule GO: all C1 - B BETTER|NON-INFERIOR" in section
    assert "| latency | held |" in section

    # Holm across the four family endpoints' superiority tests only, as statsmodels adjusts the
    # same raw p-values; non-inferiority and WORSE stay unadjusted.
    results = endpoint_results(*context(run_dir, judgments, analysis))
    raw = [r.p["better"] for r in results if r.p]
    _, expected, _, _ = multipletests(raw, alpha=0.05, method="holm")
    assert [r.adjusted["better"] for r in results if r.adjusted] == pytest.approx(
        list(expected), abs=1e-12
    )
    for r in results:
        assert r.p is not None and r.adjusted is not None
        assert r.adjusted["non-inferior"] == r.p["non-inferior"]
        assert r.adjusted["worse"] == r.p["worse"]


def test_a_winner_with_longer_replies_is_judged_at_equal_length(tmp_path: Path) -> None:
    # rich's replies are far longer (20 + 3k characters against 10), and its gain (one point
    # on four items of five) goes with length: the effect at equal length is not shown better.
    run_dir, judgments = study(tmp_path, longer=True)
    section = verdicts(tmp_path, run_dir, judgments, plan(tmp_path))
    quality = row(section, "C1 - B", "quality")
    assert quality[5] == "+0.8000" and float(quality[11]) >= 1.2
    estimate, low = (float(x) for x in quality[12].replace("\\[", "").split(",")[0].split())
    assert estimate < 0.8 and low < 0
    assert quality[-1] == "NON-INFERIOR" and "OUTCOME: NOT SHOWN" in section


def test_a_worse_candidate_is_killed_and_a_slow_one_is_go_cost(tmp_path: Path) -> None:
    run_dir, judgments = study(tmp_path / "worse", rich_worse=True)
    section = verdicts(tmp_path / "worse", run_dir, judgments, plan(tmp_path / "worse"))
    assert row(section, "C1 - B", "violations")[-1] == "WORSE"
    assert "OUTCOME: KILL (final look at n 20; rule KILL: any C1 - B WORSE)" in section
    run_dir, judgments = study(tmp_path / "slow", rich_slow=2.0)
    section = verdicts(tmp_path / "slow", run_dir, judgments, plan(tmp_path / "slow"))
    assert "OUTCOME: GO-COST" in section and "| latency | broken |" in section


def test_a_gate_not_run_gives_no_verdict(tmp_path: Path) -> None:
    run_dir, judgments = study(tmp_path)
    gates = '[[gates]]\nname = "determinism"\n[[gates]]\nname = "judges"\n'
    section = verdicts(tmp_path, run_dir, judgments, plan(tmp_path, gates=gates))
    assert "OUTCOME: NO VERDICT (validity gate(s) determinism not run, judges not run)" in section
    assert "| determinism | not run | no --gate was given |" in section


def test_the_interim_look(tmp_path: Path) -> None:
    run_dir, judgments = study(tmp_path)
    interim = "[interim]\nat_n = 10\n"
    section = verdicts(tmp_path, run_dir, judgments, plan(tmp_path, 40, interim=interim))
    # C1 - B quality (+0.8 on every cluster) stops for efficacy, C0 - B violations (18 flagged
    # items of 20 against 4) for harm; the two ties go on (no sizing margin: no futility).
    assert "OUTCOME: NO VERDICT (interim look at n 20: continue)" in section
    assert "| C1 - B | quality | stop |" in section and "| C0 - B | violations | stop |" in section
    assert "| C1 - B | violations | continue |" in section
    # The interim output reveals only stop or continue: no effect, interval or verdict.
    assert "+0.8000" not in section and "BETTER" not in section and "WORSE" not in section
    # With sizing margins, the ties (estimate 0, upper bound 0) stop for futility: every axis
    # stopped, each keeps its interim verdict, and the rules are read.
    sized = plan(tmp_path, 40, interim=interim)
    text = sized.read_text().replace("margin = 0.5\n", "margin = 0.5\nsizing_margin = 0.5\n")
    sized.write_text(text.replace("margin = 0.1\n", "margin = 0.1\nsizing_margin = 0.1\n"))
    section = verdicts(tmp_path, run_dir, judgments, sized)
    assert "OUTCOME: GO (interim look at n 20: every axis stopped; rule GO:" in section
    assert row(section, "C0 - B", "violations")[-1] == "WORSE"
    section = verdicts(tmp_path, run_dir, judgments, plan(tmp_path, 40))
    assert "OUTCOME: NO VERDICT (n 20 of the planned 40, no interim look due)" in section


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (('C0 - B"]', 'C9 - B"]'), "contrast 'C9 - B' must be `ROLE - ROLE` of [arms]"),
        (("when = []", 'when = ["gates passed"]'), "the last rule must have no condition"),
        (('"any C1 - B WORSE"', '"some C1 - B WORSE"'), "cannot read condition"),
        (("alpha = 0.05", "alpha = 0.7"), "alpha: Input should be less than 0.5"),
    ],
)
def test_a_plan_that_cannot_be_read_is_refused(
    tmp_path: Path, edit: tuple[str, str], message: str
) -> None:
    path = plan(tmp_path)
    path.write_text(path.read_text().replace(*edit, 1))
    with pytest.raises(HarnessError) as refused:
        load_inputs(analysis=path)
    assert message in refused.value.message and "\n" not in refused.value.message
