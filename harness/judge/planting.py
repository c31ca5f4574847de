"""Planting controls a judge cannot tell from the real thing, and sizing those mixed into the
confirmatory set so the running watch can decide at any study size.

- Clean flag controls come only from the rubric's declared clean set (clean_set.py): an arm's
  reply is never assumed clean, so an arm that really violates the rubric cannot make honest
  judges "flag a clean control".
- Padding controls (perturb.padded): the same reply with neutral words added must read the same
  (a flag rubric: a padded clean reply is not flagged) or tie (a pairwise rubric: against its
  unpadded self), so a judge that breaks ties toward the longer reply fails their bar.
- Grading controls are shaped like the arms' answers: the gold (must be graded right) or another
  question's gold (must be graded wrong) inside a sentence whose length is drawn from the arms'
  own answers, never a bare gold string, so a judge that says "yes" to any answer of a sentence's
  length grades the wrong ones right and fails.
- The mixed-in controls are at least the design's tenth of the confirmatory judgments and at
  least what the watch needs to decide (`watch_needs`), per judge, counting only controls with a
  verdict to catch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from random import Random
from typing import cast

from harness.errors import HarnessError
from harness.judge.grading import QaAnswer, wrong_golds
from harness.judge.perturb import FLAG_CONTROLS, FROM_CLEAN_SET, PAIRWISE_CONTROLS, Perturbation
from harness.judge.rubrics import Rubric
from harness.judge.runs import Source
from harness.stats import normalise
from rundir.judgments import Phase, Role, Strength

# A grading rubric's controls: the gold itself must be graded right (clean), another question's
# gold must be graded wrong (strong).
QA_CONTROLS: dict[str, Strength] = {"gold": "clean", "other_gold": "strong"}
# Sentences an answer is given in: each at least four words before the answer itself, so the
# control is never shorter than a sentence an arm would write.
ANSWER_FRAMES = (
    "The answer is {x}.",
    "You told me it was {x}.",
    "From what you said, it is {x}.",
    "I believe that it was {x}.",
    "As I recall, the answer is {x}.",
)
# Neutral clauses that lengthen a sentence without changing what it answers.
NEUTRAL_CLAUSES = (
    "as far as I remember",
    "if I have that right",
    "from what you told me earlier",
    "going by our earlier chats",
    "thinking back over what you shared",
    "to the best of my memory",
    "unless I am mistaken",
    "based on our conversation",
)


@dataclass(frozen=True)
class Judgment:
    """What one judgment shows (before it is split into tasks per judge and order)."""

    name: str
    role: Role
    phase: Phase
    item: str | None
    turn: int | None
    messages: list[str]
    texts: list[str]
    labels: list[str]
    control: str | None = None
    strength: Strength | None = None
    # Pairwise controls: which label must win (None: no label; `expect_flag` "TIE" for a padded
    # pair, else no verdict is right); flag and grading controls: the verdict itself.
    winner: str | None = None
    expect_flag: str | None = None
    qa: tuple[str, str, str] | None = None  # a graded answer's (prompt type, question, gold)


def kinds(rubric: Rubric) -> list[str]:
    if rubric.kind == "qa":
        return list(QA_CONTROLS)
    return list(FLAG_CONTROLS if rubric.kind == "flag" else PAIRWISE_CONTROLS)


def has_verdict(rubric: Rubric, kind: str) -> bool:
    """Whether a control of this kind has one right verdict the running watch can check."""
    return rubric.kind != "pairwise" or kind != "near_identical"


def watch_needs(bar: float, minimum: int) -> int:
    """The fewest mixed-in controls (per judge) at which the watch can decide: the design's
    minimum, and the fewest at which one miss still clears the bar (fewer, and an honest judge's
    single slip would read as drift, so the watch must wait; at this count a blind judge is
    caught)."""
    return max(minimum, math.ceil(round(1 / (1 - bar), 9)))


def mixed_counts(rubric: Rubric, confirmatory: int, share: float, needed: int) -> list[int]:
    """Mixed-in controls per kind: at least `share` of the confirmatory judgments, and enough of
    those with a verdict to catch for the watch to decide (`needed`)."""
    names = kinds(rubric)
    if confirmatory == 0:
        return [0] * len(names)
    total = math.ceil(share * confirmatory)
    while True:
        counts = [total // len(names) + (i < total % len(names)) for i in range(len(names))]
        if sum(c for c, k in zip(counts, names, strict=True) if has_verdict(rubric, k)) >= needed:
            return counts
        total += 1


class Planting:
    def __init__(self, source: Source, rng: Random) -> None:
        self.source, self.rng = source, rng

    def controls(self, rubric: Rubric, phase: Phase, counts: list[int]) -> list[Judgment]:
        table = FLAG_CONTROLS if rubric.kind == "flag" else PAIRWISE_CONTROLS
        pool = sorted(k for k in self.source.replies if k[0] in self.source.arm_codes)
        out: list[Judgment] = []
        for (kind, (strength, perturb)), count in zip(table.items(), counts, strict=True):
            if rubric.kind == "flag" and kind in FROM_CLEAN_SET:
                out += self._clean(rubric, phase, kind, perturb, count, len(out))
                continue
            made = 0
            for code, item, turn in self.rng.sample(pool, len(pool)):
                if made == count:
                    break
                made += self._control(
                    rubric, phase, kind, strength, perturb, (code, item, turn), out
                )
        return out

    def _clean(
        self,
        rubric: Rubric,
        phase: Phase,
        kind: str,
        perturb: Perturbation | None,
        count: int,
        start: int,
    ) -> list[Judgment]:
        """Clean and padded-clean controls, drawn only from the rubric's declared clean set."""
        if rubric.clean is None:
            raise HarnessError(
                f"rubric {rubric.name} declares no clean set", hint="add clean = FILE.jsonl"
            )
        entries = list(rubric.clean.entries)
        out: list[Judgment] = []
        for n in self.rng.sample(range(len(entries)), len(entries)):
            if len(out) == count:
                break
            entry = entries[n]
            if entry.messages is not None:
                said = list(entry.messages)
            else:
                said = self.source.messages.get((entry.item or "", entry.turn or 0), [])
                if not said:
                    raise HarnessError(
                        f"clean set {rubric.clean.path}: item {entry.item!r} turn {entry.turn} "
                        "is not a turn of the judged runs",
                        hint="name a turn of this study, or give the entry its own messages",
                    )
            text = entry.reply
            if perturb is not None:
                text = perturb(entry.reply, " ".join(said), self.rng, "") or ""
                if not text:
                    continue
            out.append(
                Judgment(
                    f"control:{rubric.name}:{phase}:{start + len(out)}",
                    "control",
                    phase,
                    entry.item,
                    entry.turn,
                    said,
                    [text],
                    [f"clean{n}*{kind}"],
                    kind,
                    "clean",
                    expect_flag="OK",
                )
            )
        return out

    def _control(
        self,
        rubric: Rubric,
        phase: Phase,
        kind: str,
        strength: str,
        perturb: Perturbation | None,
        key: tuple[str, str, int],
        out: list[Judgment],
    ) -> int:
        code, item, turn = key
        reply = self.source.replies[key]
        said = self.source.messages[(item, turn)]
        others = [
            text
            for (c, i, _), text in self.source.replies.items()
            if i != item and c in self.source.arm_codes
        ]
        other = self.rng.choice(others) if others else ""
        changed = reply if perturb is None else perturb(reply, " ".join(said), self.rng, other)
        if changed is None or (
            perturb is not None
            and " ".join(changed.split()) == " ".join(reply.split())
            and kind != "near_identical"
        ):
            return 0
        name = f"control:{rubric.name}:{phase}:{len(out)}"
        mark = f"{code}*{kind}"
        if rubric.kind == "flag":
            out.append(
                Judgment(
                    name,
                    "control",
                    phase,
                    item,
                    turn,
                    said,
                    [changed],
                    [mark],
                    kind,
                    cast(Strength, strength),
                    expect_flag="FLAG",
                )
            )
            return 1
        pair = [(code, reply), (mark, changed)]
        if self.rng.random() < 0.5:
            pair.reverse()
        out.append(
            Judgment(
                name,
                "control",
                phase,
                item,
                turn,
                said,
                [t for _, t in pair],
                [lab for lab, _ in pair],
                kind,
                cast(Strength, strength),
                winner=None if strength == "near_identical" else code,
                expect_flag="TIE" if kind == "padded" else None,
            )
        )
        return 1

    def qa_controls(
        self, rubric: Rubric, phase: Phase, counts: list[int], answers: list[QaAnswer]
    ) -> list[Judgment]:
        # One per question (not per arm's answer): the arms share a question's gold.
        by_item = {a.item: a for a in answers if not a.abstention}
        pool = [by_item[k] for k in sorted(by_item)]
        lengths = sorted(len(a.answer.split()) for a in answers) or [5]
        out: list[Judgment] = []
        for (kind, strength), count in zip(QA_CONTROLS.items(), counts, strict=True):
            made = 0
            for a in self.rng.sample(pool, len(pool)):
                if made == count:
                    break
                if kind == "gold":
                    text, expect = shaped(a.gold, lengths, self.rng, None), "yes"
                else:
                    wrong = wrong_golds(pool, a)
                    if not wrong:
                        continue
                    text, expect = shaped(self.rng.choice(wrong), lengths, self.rng, a.gold), "no"
                    if not text:
                        continue
                said = self.source.messages[(a.item, a.turn)]
                out.append(
                    Judgment(
                        f"control:{rubric.name}:{phase}:{len(out)}",
                        "control",
                        phase,
                        a.item,
                        a.turn,
                        said,
                        [text],
                        [f"{a.code}*{kind}"],
                        kind,
                        strength,
                        expect_flag=expect,
                        qa=(a.prompt_type, a.question, a.gold),
                    )
                )
                made += 1
        return out


def shaped(answer: str, lengths: list[int], rng: Random, avoid: str | None) -> str:
    """`answer` inside a sentence an arm might write, lengthened by neutral clauses toward a word
    count drawn from the arms' own answers. With `avoid` (the question's gold, for a planted
    wrong answer), "" when the sentence would hold every word of it and so might pass for it."""
    target = rng.choice(lengths)
    sentence = rng.choice(ANSWER_FRAMES).format(x=answer.strip().rstrip(".!?"))
    for clause in rng.sample(NEUTRAL_CLAUSES, len(NEUTRAL_CLAUSES)):
        if len(sentence.split()) >= target:
            break
        rest = sentence if sentence.startswith("I ") else sentence[0].lower() + sentence[1:]
        sentence = f"{clause[0].upper()}{clause[1:]}, {rest}"
    if avoid is not None:
        said, gold = set(normalise(sentence).split()), normalise(avoid).split()
        if gold and all(w in said for w in gold):
            return ""
    return sentence
