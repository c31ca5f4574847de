"""The study design's decision rules in the confirmatory report (sections 4.4 and 4.6): WORSE
read on the unadjusted two-sided 95% upper bound (not the margin), the win conditions a plan
declares (the sign kept leaving out any one card, the same sign in both datasets, each judge on
the candidate's side), a pair served by reuse counted once in Holm, and the plan's conditions
(`no`, `on`, `except`, BELOW-SIZING)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from statsmodels.stats.multitest import multipletests

from harness.report.confirmatory.decision import endpoint_results
from tests.helpers.report_runs import turn, write_run
from tests.report.confirmatory.test_decision import context, row, verdicts

HEAD = """schema = 1
alpha = 0.05
resamples = 2000
seed = 3
contrasts = CONTRASTS
[arms]
B = "bare"
C0 = "lean"
C1 = "rich"
"""
RULES = """
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
    "all C1 - B BETTER|NON-INFERIOR except guard",
    "no C1 - B WORSE on guard",
]
[[rules]]
outcome = "NOT SHOWN"
when = []
"""


def crafted(
    folder: Path,
    items: list[str],
    effect: Callable[[int, str], float],
    endpoints: str,
    contrasts: str = '["C1 - B"]',
) -> tuple[Path, Path, Path]:
    """One turn per item; B scores 3, lean scores as B, rich 3 + effect(k, item)."""
    folder.mkdir(parents=True, exist_ok=True)
    arms = ["bare", "lean", "rich"]
    turns = [turn("r-c", arm, item, 0) for arm in arms for item in items]
    run_dir = write_run(folder, "r-c", arms, turns, [])
    rows = []
    for k, item in enumerate(items):
        for arm in arms:
            score = 3.0 + (effect(k, item) if arm == "rich" else 0.0)
            rows.append({"item": item, "arm": arm, "turn": 0, "metric": "quality",
                         "score": score})  # fmt: skip
    judgments = folder / "judgments.jsonl"
    judgments.write_text("".join(json.dumps(r) + "\n" for r in rows))
    plan = folder / "analysis.toml"
    plan.write_text(HEAD.replace("CONTRASTS", contrasts) + endpoints + RULES)
    return run_dir, judgments, plan


QUALITY = """[[endpoints]]
name = "quality"
metric = "quality"
margin = 0.5
sizing_margin = 0.5
planned_n = N
EXTRA
[[endpoints]]
name = "guard"
metric = "quality"
margin = 0.5
planned_n = N
family = false
"""


def endpoints(n: int, extra: str = "") -> str:
    return QUALITY.replace("N", str(n)).replace("EXTRA", extra)


def test_below_b_on_every_turn_inside_the_margin_is_worse_and_killed(tmp_path: Path) -> None:
    # C1 below B on 40 of 40 turns by 0.20 to 0.30: its interval lies inside the
    # non-inferiority margin of 0.5, and it is WORSE (the two-sided 95% upper bound is below 0).
    items = [f"q{k:02d}" for k in range(40)]
    made = crafted(tmp_path, items, lambda k, _: -0.25 + 0.025 * (k % 5 - 2), endpoints(40))
    section = verdicts(tmp_path, *made)
    quality = row(section, "C1 - B", "quality")
    low, high = (float(x) for x in quality[6].strip("\\[]").split(","))
    assert -0.27 < low < high < -0.23
    assert quality[-1] == "WORSE"
    assert "OUTCOME: KILL (final look at n 40; rule KILL: any C1 - B WORSE)" in section
    # Non-inferiority alone is shown: the old reading (worse only beyond the margin) said
    # NON-INFERIOR here.
    (result, _) = endpoint_results(*context(*made))
    assert result.p is not None and result.p["non-inferior"] < 0.05 and result.p["worse"] < 0.05


def test_the_sign_must_hold_leaving_out_any_one_card(tmp_path: Path) -> None:
    # Three cards of four scripts; card a's scripts gain 0.6, card b's 0.02, card c's lose 0.04:
    # leaving card a out turns the sign.
    items = [f"{card}-s{s}" for card in "abc" for s in range(4)]
    gain = {"a": 0.6, "b": 0.02, "c": -0.04}
    extra = 'leave_one_out = true\ncard_pattern = "^(\\\\w+)-"'
    made = crafted(tmp_path, items, lambda _, item: gain[item[0]], endpoints(12, extra))
    section = verdicts(tmp_path, *made)
    quality = row(section, "C1 - B", "quality")
    # Read by card (two levels, cards left out one at a time), the gain is one card's.
    assert "the sign kept leaving out any one card: no" in quality[9]
    assert quality[-1] == "NON-INFERIOR" and "OUTCOME: NOT SHOWN" in section
    # Read by script, without the condition, the same data read BETTER and GO.
    plain = crafted(tmp_path / "plain", items, lambda _, item: gain[item[0]], endpoints(12))
    section = verdicts(tmp_path / "plain", *plain)
    assert row(section, "C1 - B", "quality")[-1] == "BETTER" and "OUTCOME: GO" in section


def test_the_same_sign_in_both_datasets(tmp_path: Path) -> None:
    items = [f"lme-{k}" for k in range(16)] + [f"locomo-{k}" for k in range(4)]
    extra = 'same_sign_by = "^(lme|locomo)-"'
    made = crafted(
        tmp_path,
        items,
        lambda k, item: 0.5 if item.startswith("lme") else -0.05 * (k % 2),
        endpoints(20, extra),
    )
    quality = row(verdicts(tmp_path, *made), "C1 - B", "quality")
    assert "the same sign in every dataset: no" in quality[9]
    assert quality[-1].startswith("NON-INFERIOR (better, but not the same sign")


def test_judges_on_side_needs_each_judges_votes(tmp_path: Path) -> None:
    # A JSONL file has one value per answer, no judge's own mean: the condition cannot be
    # read, and a BETTER is not given (fail closed).
    items = [f"q{k:02d}" for k in range(20)]
    made = crafted(
        tmp_path, items, lambda k, _: 0.5 + 0.1 * (k % 3), endpoints(20, "judges_on_side = true")
    )
    quality = row(verdicts(tmp_path, *made), "C1 - B", "quality")
    assert "each judge on the candidate's side: no" in quality[9]
    assert quality[-1].startswith("NON-INFERIOR (better, but not each judge")


def test_no_better_and_every_upper_bound_below_the_sizing_margin_is_killed(
    tmp_path: Path,
) -> None:
    items = [f"q{k:02d}" for k in range(30)]
    made = crafted(tmp_path, items, lambda k, _: 0.02 * (k % 3 - 1), endpoints(30))
    section = verdicts(tmp_path, *made)
    assert row(section, "C1 - B", "quality")[-1] == "NON-INFERIOR"
    assert (
        "OUTCOME: KILL (final look at n 30; rule KILL: no C1 - B BETTER and all C1 - B "
        "BELOW-SIZING)" in section
    )


@pytest.mark.parametrize("reuse", [False, True])
def test_a_pair_served_by_reuse_counts_once_in_holm(tmp_path: Path, reuse: bool) -> None:
    items = [f"q{k:02d}" for k in range(20)]
    extra = "served_by_reuse = true" if reuse else ""
    made = crafted(
        tmp_path,
        items,
        lambda k, _: 0.2 * (k % 3 - 0.8),
        endpoints(20, extra).replace("family = false", "family = true"),
        contrasts='["C1 - B", "C0 - B"]',
    )
    results = endpoint_results(*context(*made))
    raw = {(r.contrast, r.endpoint.name): r.p["better"] for r in results if r.p}
    quality = [raw[("C1 - B", "quality")], raw[("C0 - B", "quality")]]
    guard = [raw[("C1 - B", "guard")], raw[("C0 - B", "guard")]]
    family = [max(quality), *guard] if reuse else [*quality, *guard]
    _, adjusted, _, _ = multipletests(family, method="holm")
    got = {(r.contrast, r.endpoint.name): r.adjusted["better"] for r in results if r.adjusted}
    assert got[("C1 - B", "guard")] == pytest.approx(adjusted[-2])
    assert got[("C0 - B", "guard")] == pytest.approx(adjusted[-1])
    if reuse:
        assert got[("C1 - B", "quality")] == got[("C0 - B", "quality")]
        assert got[("C1 - B", "quality")] == pytest.approx(adjusted[0])
    else:
        assert got[("C1 - B", "quality")] == pytest.approx(adjusted[0])
