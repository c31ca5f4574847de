"""The judge-free scorers: exact match, multiple-choice log loss with the clip, NET(λ)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness.stats import (
    choice_log_loss,
    exact_match,
    judge_answer,
    mean_interval,
    net,
    net_item_scores,
    net_sweep,
    normalize_answer,
)

CHOICES = ["A", "B", "C", "D"]


def test_exact_match_normalizes_as_squad_does() -> None:
    assert normalize_answer("  The  Eiffel-Tower!  ") == "eiffeltower"
    assert exact_match("the Eiffel Tower.", "Eiffel Tower")
    assert exact_match("An apple", ["pear", "apple"])
    assert not exact_match("Eiffel", "Eiffel Tower")
    # Wider than ASCII: casefold and Unicode punctuation do not make a right answer wrong.
    assert exact_match("STRASSE", "Straße")
    assert exact_match("«Paris»", "Paris")
    # Articles are removed only as words, never inside one.
    assert normalize_answer("theatre") == "theatre"
    with pytest.raises(ValueError, match="at least one gold"):
        exact_match("x", [])


def test_log_loss_in_nats_against_the_gold_choice() -> None:
    loss = choice_log_loss({"A": 0.5, "B": 0.25, "C": 0.25}, "A", CHOICES)
    assert loss == pytest.approx(math.log(2))
    # A confident miss costs ln 100 at most: the clip at 0.01, not infinity.
    assert choice_log_loss({"B": 1.0}, "A", CHOICES) == pytest.approx(math.log(100))
    assert choice_log_loss({"A": 1.0}, "A", CHOICES) == 0.0
    # Below the clip every probability counts as 0.01, and nothing is renormalised.
    assert choice_log_loss({"A": 0.001, "B": 0.999}, "A", CHOICES) == pytest.approx(math.log(100))


def test_log_loss_against_a_known_distribution() -> None:
    target = {"A": 0.7, "B": 0.3}
    predicted = {"A": 0.6, "B": 0.2, "C": 0.2}
    expected = -(0.7 * math.log(0.6) + 0.3 * math.log(0.2))
    assert choice_log_loss(predicted, target, CHOICES) == pytest.approx(expected)
    # The loss is smallest when the arm reports the target itself (its entropy).
    entropy = -(0.7 * math.log(0.7) + 0.3 * math.log(0.3))
    assert choice_log_loss(target, target, CHOICES) == pytest.approx(entropy)


@pytest.mark.parametrize(
    ("predicted", "message"),
    [
        ({"A": 1.0, "B": 1.0}, "sum to 1"),  # a "distribution" that would dodge every loss
        ({"A": 1.2, "B": -0.2}, "negative"),
        ({"E": 1.0}, "not among the choices"),
    ],
)
def test_log_loss_refuses_what_is_not_a_distribution(
    predicted: dict[str, float], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        choice_log_loss(predicted, "A", CHOICES)


def test_net_sweep_and_break_even() -> None:
    judgements = ["right"] * 6 + ["wrong"] * 2 + ["abstain"] * 2
    sweep = net_sweep(judgements)  # type: ignore[arg-type]
    assert (sweep.right, sweep.wrong, sweep.abstained, sweep.n) == (6, 2, 2, 10)
    assert sweep.net == {"1": 0.4, "2": 0.2, "5": -0.4, "10": -1.4}
    assert sweep.break_even == 3.0
    assert net(6, 2, 2, sweep.break_even) == 0.0
    # Abstaining instead of answering wrong raises NET at every λ.
    bolder = net_sweep(["right"] * 6 + ["wrong"] * 4)  # type: ignore[arg-type]
    assert all(bolder.net[lam] < sweep.net[lam] for lam in sweep.net)
    assert net_sweep(["right", "abstain"]).break_even is None  # never negative
    with pytest.raises(ValueError, match="right, wrong or abstain"):
        net_sweep(["maybe"])  # type: ignore[list-item]


def test_net_item_scores_bootstrap_to_net() -> None:
    judgements = [
        judge_answer(said, "Paris") for said in ["Paris", "paris.", "Lyon", "I don't know"]
    ]
    assert judgements == ["right", "right", "wrong", "abstain"]
    scores = net_item_scores(judgements, lam=2)
    assert float(np.mean(scores)) == net(2, 1, 1, 2) == 0.0
    assert mean_interval(scores).estimate == 0.0
