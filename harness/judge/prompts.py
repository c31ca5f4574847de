"""Prompt files: the rubric, the user's messages and the reply (or replies) in a fixed template.

Every text a judge sees is whitespace-normalised (runs of whitespace become one space), so a
reply's layout cannot tell one arm from another, and so a reply is one line that cannot forge the
template's own lines. Replies are shown as "Reply 1" and "Reply 2", never by arm.
"""

from __future__ import annotations

import hashlib
from importlib import resources
from string import Template

from harness.judge.rubrics import Rubric

# The qa templates are LongMemEval's grading prompts (harness/judge/grading.py says whence).
QA_TYPES = (
    "default",
    "temporal-reasoning",
    "knowledge-update",
    "single-session-preference",
    "abstention",
)
TEMPLATE_NAMES = ("flag", "pairwise", *(f"qa-{t}" for t in QA_TYPES))
FLAG_VERDICTS = ("FLAG", "OK")
PAIRWISE_VERDICTS = ("Reply 1", "Reply 2", "TIE")
QA_VERDICTS = ("yes", "no")


def normalise(text: str) -> str:
    return " ".join(text.split())


def template_text(name: str) -> str:
    return (resources.files("harness.judge") / "templates" / f"{name}.txt").read_text("utf-8")


def template_hashes() -> dict[str, str]:
    return {
        name: hashlib.sha256(template_text(name).encode("utf-8")).hexdigest()
        for name in TEMPLATE_NAMES
    }


def conversation(messages: list[str]) -> str:
    return "\n".join(f"User: {normalise(message)}" for message in messages)


def flag_prompt(rubric: Rubric, messages: list[str], reply: str) -> str:
    return Template(template_text("flag")).substitute(
        rubric=rubric.name,
        version=rubric.file.version,
        question=normalise(rubric.file.question),
        conversation=conversation(messages),
        reply=normalise(reply),
    )


def pairwise_prompt(rubric: Rubric, messages: list[str], first: str, second: str) -> str:
    return Template(template_text("pairwise")).substitute(
        rubric=rubric.name,
        version=rubric.file.version,
        question=normalise(rubric.file.question),
        conversation=conversation(messages),
        reply1=normalise(first),
        reply2=normalise(second),
    )


def qa_prompt(prompt_type: str, question: str, gold: str, answer: str) -> str:
    """LongMemEval's grading prompt of `prompt_type` (one of QA_TYPES), each text on one line."""
    if prompt_type not in QA_TYPES:
        raise ValueError(f"no grading prompt for type {prompt_type!r}")
    return Template(template_text(f"qa-{prompt_type}")).substitute(
        question=normalise(question), answer=normalise(gold), response=normalise(answer)
    )
