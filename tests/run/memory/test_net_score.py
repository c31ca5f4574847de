"""NET(lambda): the ternary answer-or-abstain score, and the rule deciding an abstention."""

from __future__ import annotations

import pytest

from harness.run.memory.net_score import abstains, net, scored_net


@pytest.mark.parametrize(
    "answer",
    [
        "I don't know.",
        "I DON\u2019T KNOW",
        "That was never mentioned in our conversations.",
        "There is no information about her dog's name.",
        "I do not have enough information to answer that.",
        "",
        "   ",
    ],
)
def test_refusals_abstain(answer: str) -> None:
    assert abstains(answer)


@pytest.mark.parametrize(
    "answer",
    [
        "No, she moved to Paris.",
        "Unknown Pleasures by Joy Division",  # a lone "unknown" is an answer
        "She knows the answer is 42.",
        "The dog is not named Rex, it's Max.",
    ],
)
def test_answers_do_not_abstain(answer: str) -> None:
    assert not abstains(answer)


def test_answerable_question_right_is_one_abstaining_zero_wrong_minus_lambda() -> None:
    assert net(False, abstained=False, correct=True, lam=2.0) == 1.0
    assert net(False, abstained=True, correct=False, lam=2.0) == 0.0
    assert net(False, abstained=False, correct=False, lam=2.0) == -2.0


def test_abstention_question_abstaining_is_right_answering_is_wrong() -> None:
    assert net(True, abstained=True, correct=False, lam=0.5) == 1.0
    assert net(True, abstained=False, correct=False, lam=0.5) == -0.5


def test_an_unasked_question_has_no_score_an_arm_error_is_wrong() -> None:
    assert scored_net("infra_failed", False, True, False, 1.0) is None
    assert scored_net("stray_connection", True, True, False, 1.0) is None
    # An arm that errored did not choose to abstain, even on an abstention question.
    assert scored_net("error", True, True, False, 1.0) == -1.0
    assert scored_net("resource_limit", False, True, False, 3.0) == -3.0
    assert scored_net("cut", False, False, True, 1.0) == 1.0


def test_the_reports_whole_answer_markers_abstain_too() -> None:
    assert abstains("Not sure.") and abstains("Unknown")
