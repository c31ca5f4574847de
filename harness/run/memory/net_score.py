"""NET(lambda): a judge-free answer-or-abstain score for memory benchmark questions.

The ternary reward of Mohamadi, Wang and Li, "Honesty over Accuracy: Trustworthy Language
Models through Reinforced Hesitation" (arXiv:2511.11500, 2025): +1 for a correct answer, 0 for
an abstention, -lambda for an error. Applied per question here:

- an answerable question: +1 if the answer matches the gold (normalised exact match, as
  question_records.normalise), 0 if the arm abstained, -lambda otherwise;
- an abstention question (LongMemEval's `_abs`, LoCoMo's adversarial category 5; the history
  does not hold the answer): abstaining is its correct answer, +1; any other answer is an
  error, -lambda.

The same form as the report's `--gold` NET(λ) (harness/stats/scorers.py): averaged over
questions, the per-question scores give (right - lambda*wrong) / n there, with an abstention
question's abstention counted right.

A question the harness failed to ask (infra_failed, or the run halted on a stray connection)
gets no score; one the arm failed itself (error, resource_limit) scores -lambda, an error, not
a chosen abstention; a cut answer is scored on what it said. lambda is the
study's `[items] net_lambda` (default 1.0: a wrong answer undoes a right one).

Whether an answer abstains is decided from its text alone: once normalised (scorers'
normalize_answer: casefold, no punctuation, curly apostrophes included, no articles, single
spaces), it abstains if it is one of scorers.ABSTENTIONS as a whole ("unknown", "not sure"), or
contains one of ABSTAIN_PHRASES, since a memory arm refuses in a sentence. The phrases are
whole refusals ("i dont know", "not mentioned", "no information"), not words like "no" or
"unknown", which real answers hold ("no, she moved to Paris", "Unknown Pleasures").
"""

from __future__ import annotations

from harness.stats import ABSTENTIONS, normalize_answer

DEFAULT_LAMBDA = 1.0

ABSTAIN_PHRASES: tuple[str, ...] = (
    "i dont know",
    "i do not know",
    "i dont have",
    "i do not have",
    "i cannot answer",
    "i cant answer",
    "i am unable to",
    "im unable to",
    "i cannot determine",
    "i cant determine",
    "i dont recall",
    "i do not recall",
    "not mentioned",
    "never mentioned",
    "was not discussed",
    "wasnt discussed",
    "no information",
    "not enough information",
    "insufficient information",
    "no record of",
    "no mention of",
    "not specified",
    "not provided",
    "cannot be determined",
    "unanswerable",
)

_WHOLE = frozenset(normalize_answer(marker) for marker in ABSTENTIONS)


def abstains(answer: str) -> bool:
    """Whether `answer` declines to answer (the rule above)."""
    text = normalize_answer(answer)
    if text in _WHOLE:
        return True
    padded = f" {text} "
    return any(f" {phrase} " in padded for phrase in ABSTAIN_PHRASES)


def scored_net(
    outcome: str, abstention_question: bool, abstained: bool, correct: bool, lam: float
) -> float | None:
    """NET(lambda) of a question whose answer turn ended with `outcome` (turns.jsonl)."""
    if outcome in ("infra_failed", "stray_connection"):
        return None
    if outcome not in ("done", "cut"):
        return -lam
    return net(abstention_question, abstained, correct, lam)


def net(abstention_question: bool, abstained: bool, correct: bool, lam: float) -> float:
    """One question's NET(lambda) score."""
    if abstention_question:
        return 1.0 if abstained else -lam
    if correct:
        return 1.0
    return 0.0 if abstained else -lam
