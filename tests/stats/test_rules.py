"""The study design's decision rules on one endpoint (harness/stats/rules.py), against scipy and
statsmodels where they compute the same thing, and the two-level bootstrap
(harness/stats/onesided.py)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from harness.stats import onesided, rules


def test_worse_reads_the_two_sided_95_upper_bound_not_the_margin() -> None:
    # 40 turns, every one below the baseline by about a quarter: the interval lies inside a
    # non-inferiority margin of 0.5, and the candidate is still WORSE.
    rng = np.random.default_rng(5)
    effects = -0.25 + rng.uniform(-0.05, 0.05, size=40)
    estimate, reps = onesided.cluster_replicates(effects, range(40), 4000, 1)
    upper_95 = float(np.quantile(reps, rules.WORSE_LEVEL))
    low, _ = onesided.bounds(reps, 0.05)
    assert -0.27 < estimate < -0.23 and upper_95 < -0.23
    assert rules.is_worse(upper_95) and rules.is_non_inferior(low, 0.5)
    assert rules.status(False, True, True) == "WORSE"
    # The percentile bound agrees with the t interval scipy gives on the same data.
    sem = stats.sem(effects)
    t_upper = stats.t.interval(0.95, df=39, loc=np.mean(effects), scale=sem)[1]
    assert upper_95 == pytest.approx(t_upper, abs=0.2 * sem * 2)


def test_status_order_and_win_conditions() -> None:
    assert rules.status(True, False, True) == "BETTER"
    assert rules.status(True, False, True, win_failed=["leave one out"]) == "NON-INFERIOR"
    assert rules.status(False, False, True) == "NON-INFERIOR"
    assert rules.status(False, False, True, superiority_only=True) == "NOT SHOWN"
    assert rules.status(False, False, False) == "NOT SHOWN"


def test_holm_counts_a_pair_served_by_reuse_once() -> None:
    raw = {("C1", "X1"): 0.004, ("C0", "X1"): 0.006, ("C1", "Q1"): 0.01, ("C0", "Q1"): 0.03}
    got = rules.holm_once(raw, [[("C1", "X1"), ("C0", "X1")]])
    # Three tests: X1 (its larger p, 0.006), Q1 for C1 and for C0, as statsmodels adjusts them.
    _, expected, _, _ = multipletests([0.006, 0.01, 0.03], method="holm")
    assert got[("C1", "X1")] == got[("C0", "X1")] == pytest.approx(expected[0])
    assert got[("C1", "Q1")] == pytest.approx(expected[1])
    assert got[("C0", "Q1")] == pytest.approx(expected[2])
    _, four, _, _ = multipletests(list(raw.values()), method="holm")
    assert rules.holm_once(raw) == pytest.approx(dict(zip(raw, four, strict=True)))


def test_leave_one_out_and_same_sign() -> None:
    # One card carries the whole gain: leaving it out turns the sign.
    effects = [1.0, 1.0, 0.0, 0.0, -0.1, 0.0]
    cards = ["a", "a", "b", "b", "c", "c"]
    assert np.mean(effects) > 0
    assert not rules.sign_kept_leaving_one_out(effects, cards)
    assert rules.sign_kept_leaving_one_out([0.2, 0.1, 0.3, 0.1, 0.2, 0.1], cards)
    assert not rules.sign_kept_leaving_one_out([0.2, 0.1], ["a", "a"])
    datasets = ["lme", "lme", "lme", "locomo", "locomo", "locomo"]
    assert rules.same_sign_in_every([0.2, 0.1, 0.0, 0.1, 0.0, 0.0], datasets)
    assert not rules.same_sign_in_every([0.3, 0.3, 0.3, -0.1, 0.0, 0.0], datasets)
    assert rules.judges_on_side({"alpha": 0.1, "beta": 0.02})
    assert not rules.judges_on_side({"alpha": 0.3, "beta": -0.01})
    assert not rules.judges_on_side({})


def test_interim_reading() -> None:
    z = stats.norm.isf(0.0005)  # the two-sided 0.001 bound
    assert abs(rules.Z_INTERIM - z) < 0.005
    assert rules.interim_reading(0.33, 0.1, 0.5, 0.1).reason == "efficacy"
    assert rules.interim_reading(-0.33, 0.1, -0.1, 0.1).reason == "harm"
    assert rules.interim_reading(0.30, 0.1, 0.5, 0.1).decision == "continue"
    # Futility: the upper bound below the sizing margin and the estimate at most 0.
    assert rules.interim_reading(0.0, 0.02, 0.04, 0.08).reason == "futility"
    assert rules.interim_reading(0.01, 0.02, 0.05, 0.08).decision == "continue"
    assert rules.interim_reading(-0.01, 0.02, 0.09, 0.08).decision == "continue"
    assert rules.interim_reading(-0.01, 0.02, 0.03, None).decision == "continue"
    assert rules.interim_reading(0.2, 0.0, 0.2, None).reason == "efficacy"  # no spread at all


def test_two_level_bootstrap_resamples_cards_then_scripts() -> None:
    # Four cards of three scripts; the cards differ much more than their scripts do, so the
    # two-level spread is close to the spread of card means (one level: far too narrow).
    rng = np.random.default_rng(2)
    card_means = [-0.6, -0.2, 0.2, 0.6]
    values, cards, scripts = [], [], []
    for c, mean in enumerate(card_means):
        for s in range(3):
            for _ in range(4):
                values.append(mean + rng.normal(0, 0.05))
                cards.append(f"card{c}")
                scripts.append(f"card{c}/s{s}")
    estimate, reps = onesided.two_level_replicates(values, cards, scripts, 4000, 7)
    assert estimate == pytest.approx(np.mean(values))
    card_se = np.std([np.mean(values[12 * c : 12 * c + 12]) for c in range(4)], ddof=0) / 2
    assert np.std(reps) == pytest.approx(card_se, rel=0.15)
    _, flat = onesided.cluster_replicates(values, scripts, 4000, 7)
    assert np.std(flat) < 0.9 * np.std(reps)
    again = onesided.two_level_replicates(values, cards, scripts, 4000, 7)[1]
    assert np.array_equal(reps, again)
