"""Judge-free scorers for items that carry gold: exact match, multiple-choice log loss, NET(λ).

None of them calls a model, so anyone holding the per-item records recomputes the same numbers.

- Normalized exact match is SQuAD v1.1's `normalize_answer` (its official evaluate script:
  lower-case, drop punctuation, drop the articles a/an/the, collapse whitespace), with two
  widenings so non-ASCII answers are not scored as wrong for their typography: `str.casefold`
  instead of `lower` (German ß = ss), and every Unicode punctuation character (categories P*)
  dropped as well as ASCII `string.punctuation`. Articles are English only, as in SQuAD.
- Multiple choice: the expected log loss in nats, -Σ q(k) ln p(k), of the arm's distribution p over
  the choices against the item's known distribution q (the gold choice as a one-hot when the item
  has a single answer). p must be a distribution (non-negative, summing to 1 within 1e-6; choices
  it leaves out have probability 0). Every p(k) is then clipped from below at 0.01 and NOT
  renormalised: the clip only bounds the penalty of a confident miss at ln 100 ≈ 4.61 nats per
  item, and renormalising would move probability away from the choices the arm actually chose.
- NET(λ) = (right − λ·wrong) / n over n answered-or-abstained items: an abstention counts as
  neither right nor wrong, so it scores 0 while a wrong answer costs λ. The sweep is λ ∈ {1, 2, 5,
  10}; the break-even λ is right / wrong, the penalty at which answering stops paying (NET = 0).
"""

from __future__ import annotations

import math
import re
import string
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

CLIP = 0.01
NET_LAMBDAS: tuple[float, ...] = (1.0, 2.0, 5.0, 10.0)
#: Answers that say "I do not know" (compared after normalisation); a study may pass its own.
ABSTENTIONS: tuple[str, ...] = (
    "",
    "i don't know",
    "i do not know",
    "unknown",
    "not sure",
    "i'm not sure",
    "no answer",
    "cannot answer",
    "i cannot answer",
    "abstain",
)

Judgement = Literal["right", "wrong", "abstain"]

_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_answer(text: str) -> str:
    """SQuAD v1.1 normalisation with casefold and Unicode punctuation (see the module's doc)."""
    folded = text.casefold()
    kept = "".join(
        " " if ch.isspace() else ch
        for ch in folded
        if ch not in string.punctuation and not unicodedata.category(ch).startswith("P")
    )
    return " ".join(_ARTICLES.sub(" ", kept).split())


def exact_match(prediction: str, gold: str | Iterable[str]) -> bool:
    """True when the prediction equals any gold answer after normalisation."""
    golds = [gold] if isinstance(gold, str) else list(gold)
    if not golds:
        raise ValueError("an item scored by exact match needs at least one gold answer")
    said = normalize_answer(prediction)
    return any(said == normalize_answer(answer) for answer in golds)


def judge_answer(
    prediction: str, gold: str | Iterable[str], abstentions: Iterable[str] = ABSTENTIONS
) -> Judgement:
    """right, wrong or abstain for NET(λ): an abstention is a normalised match of a marker."""
    said = normalize_answer(prediction)
    if said in {normalize_answer(marker) for marker in abstentions}:
        return "abstain"
    return "right" if exact_match(prediction, gold) else "wrong"


def choice_log_loss(
    predicted: Mapping[str, float],
    target: str | Mapping[str, float],
    choices: Sequence[str],
    clip: float = CLIP,
) -> float:
    """Expected log loss in nats of the arm's distribution over `choices` against the target
    (a gold choice, or the item's known distribution), every probability clipped at `clip`."""
    if not 0 < clip < 1:
        raise ValueError(f"the clip must lie between 0 and 1 (the study's is {CLIP}), got {clip}")
    p = _distribution(predicted, choices, "the arm's answer")
    q = {target: 1.0} if isinstance(target, str) else dict(target)
    q = _distribution(q, choices, "the item's target")
    return float(-sum(weight * math.log(max(p[k], clip)) for k, weight in q.items() if weight))


def _distribution(
    probabilities: Mapping[str, float], choices: Sequence[str], what: str
) -> dict[str, float]:
    allowed = set(choices)
    if not allowed:
        raise ValueError("a multiple-choice item needs its list of choices")
    unknown = sorted(set(probabilities) - allowed)
    if unknown:
        raise ValueError(
            f"{what} names {unknown}, which are not among the choices {sorted(allowed)}"
        )
    values = {k: float(probabilities.get(k, 0.0)) for k in choices}
    if any(not math.isfinite(v) or v < 0 for v in values.values()):
        raise ValueError(f"{what} has a negative or non-finite probability: {values}")
    total = sum(values.values())
    if abs(total - 1.0) > 1e-6:
        raise ValueError(f"{what} must sum to 1 over the choices, sums to {total:.6g}")
    return values


class NetSweep(BaseModel):
    """NET(λ) at each λ of the sweep, and the counts it came from."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    right: int
    wrong: int
    abstained: int
    n: int
    # λ (as text, so the model is plain JSON) -> NET(λ).
    net: dict[str, float]
    # right / wrong: NET > 0 below it, < 0 above it. None when no answer was wrong (NET never
    # turns negative) or nothing was answered.
    break_even: float | None


def net(right: int, wrong: int, abstained: int, lam: float) -> float:
    """(right − λ·wrong) / n, abstentions in n but neither right nor wrong."""
    n = right + wrong + abstained
    if min(right, wrong, abstained) < 0 or n == 0:
        raise ValueError("NET needs non-negative counts of at least one item")
    if lam < 0:
        raise ValueError(f"λ is the price of a wrong answer and cannot be negative, got {lam}")
    return (right - lam * wrong) / n


def net_sweep(judgements: Iterable[Judgement], lambdas: Sequence[float] = NET_LAMBDAS) -> NetSweep:
    counted = list(judgements)
    bad = sorted({j for j in counted if j not in ("right", "wrong", "abstain")})
    if bad:
        raise ValueError(f"judgements must be right, wrong or abstain, got {bad}")
    right, wrong = counted.count("right"), counted.count("wrong")
    abstained = counted.count("abstain")
    return NetSweep(
        right=right,
        wrong=wrong,
        abstained=abstained,
        n=len(counted),
        net={f"{lam:g}": net(right, wrong, abstained, lam) for lam in lambdas},
        break_even=right / wrong if wrong else None,
    )


def net_item_scores(judgements: Iterable[Judgement], lam: float) -> list[float]:
    """Per-item contributions (1, −λ, 0) whose mean is NET(λ): feed them to the bootstrap."""
    points = {"right": 1.0, "wrong": -float(lam), "abstain": 0.0}
    return [points[j] for j in judgements]
