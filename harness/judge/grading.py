"""Grading answers against a gold answer: what a `kind = "qa"` rubric judges, and with which prompt.

Two sources of answers (the rubric's `grades`):
- `questions`: a memory benchmark's questions (LongMemEval, LoCoMo, or a jsonl of the same
  shape), one per item, answered on its last turn; the gold, type and abstention flag come from
  the study's own items (what questions.jsonl was written from), never from a file a run wrote.
  Every answer is graded, as LongMemEval grades every answer.
- `probes`: the turns of a scripted study that `expect` words from earlier turns (memory
  controls). An answer whose normalised text holds every expected word is settled by that exact
  match (exact.jsonl) and no judge is asked; only the others are graded.

The prompt is LongMemEval's for the question's type (xiaowu0162/LongMemEval,
src/evaluation/evaluate_qa.py, `get_anscheck_prompt`, copied verbatim into templates/qa-*.txt with
only this harness's two-line reply format appended): single-session-user, single-session-assistant
and multi-session use its default prompt; temporal-reasoning (off-by-one days forgiven),
knowledge-update (an updated answer beside the old one is right) and single-session-preference
(the gold is a rubric) their own; an abstention question (`_abs`) the abstention prompt.
LoCoMo has no such types; its categories get the nearest (its evaluation code: 1 multi-hop,
2 temporal, 3 open-domain, 4 single-hop, 5 adversarial): 2 -> temporal-reasoning,
5 -> abstention (the conversation does not say), the rest -> the default prompt.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from harness.judge.runs import Source
from harness.stats import normalise

LONGMEMEVAL_OWN = ("temporal-reasoning", "knowledge-update", "single-session-preference")
LOCOMO_NEAREST = {2: "temporal-reasoning", 5: "abstention"}


def prompt_type(question_type: str | None, category: int | None, abstention: bool) -> str:
    """The LongMemEval prompt a question is graded with (prompts.QA_TYPES)."""
    if abstention:
        return "abstention"
    if question_type in LONGMEMEVAL_OWN:
        return question_type
    if question_type is None and category is not None:
        return LOCOMO_NEAREST.get(category, "default")
    return "default"


@dataclass(frozen=True)
class QaAnswer:
    """One arm's answer to one graded question or probe."""

    code: str
    item: str
    turn: int
    question: str
    gold: str
    prompt_type: str
    answer: str
    abstention: bool
    expect: tuple[str, ...] = ()  # a probe's expected words


def _contains(haystack: str, needle: str) -> bool:
    return re.search(rf"(?:^| ){re.escape(needle)}(?: |$)", haystack) is not None


def exact_match(answer: str, expect: tuple[str, ...]) -> bool:
    """Every expected word (or phrase), normalised, appears whole in the normalised answer."""
    said = normalise(answer)
    wanted = [normalise(word) for word in expect]
    return bool(wanted) and all(w and _contains(said, w) for w in wanted)


def qa_answers(source: Source, grades: Literal["questions", "probes"]) -> list[QaAnswer]:
    out = []
    for (code, item_id, turn), reply in sorted(source.replies.items()):
        if code not in source.arm_codes:
            continue  # an A/A second sample is not graded
        item = source.items[item_id]
        said = source.messages[(item_id, turn)][-1]
        if grades == "questions":
            if item.memory is None or turn != source.last_turn[item_id]:
                continue
            q = item.memory.question
            out.append(
                QaAnswer(
                    code=code,
                    item=item_id,
                    turn=turn,
                    question=said,
                    gold=q.answer,
                    prompt_type=prompt_type(q.question_type, q.category, q.abstention),
                    answer=reply,
                    abstention=q.abstention,
                )
            )
            continue
        expect = tuple(item.turns[turn].expect)
        if expect:
            out.append(
                QaAnswer(
                    code=code,
                    item=item_id,
                    turn=turn,
                    question=said,
                    gold="; ".join(expect),
                    prompt_type="default",
                    answer=reply,
                    abstention=False,
                    expect=expect,
                )
            )
    return out


def wrong_golds(answers: list[QaAnswer], target: QaAnswer) -> list[str]:
    """Other questions' golds that cannot pass for `target`'s: a planted wrong answer."""
    mine = normalise(target.gold)
    out = set()
    for a in answers:
        other = normalise(a.gold)
        if a.abstention or a.item == target.item or not other:
            continue
        if _contains(other, mine) or _contains(mine, other):
            continue
        out.add(a.gold)
    return sorted(out)
