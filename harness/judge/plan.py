"""The stage's plan: every task (one prompt to one judge), built and written before any is sent.

Per rubric: planted controls for calibration; the confirmatory judgments (a flag per reply, a
pair per two arms' replies to one turn, in both orders); extra controls mixed into them (a tenth,
and never fewer than the running watch needs: harness/judge/planting.py plants every control);
a second asking of every control and of a seeded tenth of the judgments (stability); the A/A pairs
(an arm against its second sample). A grading rubric (kind qa) plans the same way with its own
controls (an answer that is its gold, or another question's gold) and LongMemEval's prompts, and
settles probe answers that match exactly without a task (`Planner.exact`). Every task gets an
opaque id from the stage's seed, so neither a prompt file's name nor its place says what it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from random import Random
from typing import Literal

from harness.errors import HarnessError
from harness.judge.grading import QaAnswer, exact_match, qa_answers
from harness.judge.judges import Judge
from harness.judge.planting import QA_CONTROLS, Planting, kinds, mixed_counts, watch_needs
from harness.judge.planting import Judgment as _Judgment
from harness.judge.prompts import flag_prompt, pairwise_prompt, qa_prompt
from harness.judge.rubrics import Rubric
from harness.judge.runs import Source
from harness.judge.send import RUNNING_BAR, RUNNING_MIN_CONTROLS
from rundir.judgments import ExactMatch, JudgmentTask, Role, sha256_bytes


@dataclass(frozen=True)
class Planned:
    task: JudgmentTask
    prompt: str


@dataclass(frozen=True)
class Settings:
    controls_per_kind: int = 10
    repeat_share: float = 0.10
    mix_share: float = 0.10


class Planner:
    def __init__(
        self, source: Source, judges: list[Judge], rng: Random, settings: Settings
    ) -> None:
        self.source, self.judges, self.rng, self.settings = source, judges, rng, settings
        self.ids: set[str] = set()
        self.tasks: list[Planned] = []
        self.exact: list[ExactMatch] = []
        self.planting = Planting(source, rng)

    def plan(self, rubrics: list[Rubric]) -> list[Planned]:
        for rubric in rubrics:
            self._plan_rubric(rubric)
        return self.tasks

    def _plan_rubric(self, rubric: Rubric) -> None:
        n = self.settings.controls_per_kind
        answers: list[QaAnswer] = []
        if rubric.kind == "qa":
            assert rubric.file.grades is not None
            answers = qa_answers(self.source, rubric.file.grades)
            if not answers:
                what = {
                    "questions": "memory benchmark questions",
                    "probes": "turns that expect words",
                }
                raise HarnessError(
                    f"rubric {rubric.name} grades {rubric.file.grades}, and the runs answered no "
                    f"{what[rubric.file.grades]}",
                    hint="give it runs of a study that has them, or leave the rubric out",
                )
            controls = self.planting.qa_controls(
                rubric, "calibration", [n] * len(QA_CONTROLS), answers
            )
            confirmatory = self._graded(rubric, answers)
        else:
            controls = self.planting.controls(rubric, "calibration", [n] * len(kinds(rubric)))
            confirmatory = self._confirmatory(rubric)
        for judgment in controls:
            self._add(rubric, judgment, repeat=True)
        # At least a tenth, and enough for the running watch to decide (planting.py).
        needed = watch_needs(RUNNING_BAR, RUNNING_MIN_CONTROLS)
        counts = mixed_counts(rubric, len(confirmatory), self.settings.mix_share, needed)
        mixed_in = (
            self.planting.qa_controls(rubric, "confirmatory", counts, answers)
            if rubric.kind == "qa"
            else self.planting.controls(rubric, "confirmatory", counts)
        )
        for judgment in mixed_in:
            self._add(rubric, judgment, repeat=True)
        repeated = set(
            self.rng.sample(
                range(len(confirmatory)), round(self.settings.repeat_share * len(confirmatory))
            )
        )
        for i, judgment in enumerate(confirmatory):
            self._add(rubric, judgment, repeat=i in repeated)
        if rubric.kind == "pairwise" and self.source.aa_codes is not None:
            for judgment in self._aa(rubric):
                self._add(rubric, judgment, repeat=False)

    def _graded(self, rubric: Rubric, answers: list[QaAnswer]) -> list[_Judgment]:
        """A judgment per answer, except probe answers settled by exact match."""
        out = []
        for a in answers:
            name = f"qa:{rubric.name}:{a.item}:{a.turn}:{a.code}"
            if a.expect and exact_match(a.answer, a.expect):
                self.exact.append(
                    ExactMatch(
                        judgment=name,
                        rubric=rubric.name,
                        label=a.code,
                        item=a.item,
                        turn=a.turn,
                        gold=a.gold,
                        answer=a.answer,
                    )
                )
                continue
            said = self.source.messages[(a.item, a.turn)]
            qa = (a.prompt_type, a.question, a.gold)
            out.append(
                _Judgment(
                    name,
                    "confirmatory",
                    "confirmatory",
                    a.item,
                    a.turn,
                    said,
                    [a.answer],
                    [a.code],
                    qa=qa,
                )
            )
        return out

    def _turns(self, rubric: Rubric) -> list[tuple[str, int]]:
        keys = sorted(self.source.messages)
        if rubric.file.turns == "last":
            keys = [(item, turn) for item, turn in keys if turn == self.source.last_turn[item]]
        return keys

    def _confirmatory(self, rubric: Rubric) -> list[_Judgment]:
        out = []
        replies, codes = self.source.replies, sorted(self.source.arm_codes)
        for item, turn in self._turns(rubric):
            said = self.source.messages[(item, turn)]
            if rubric.kind == "flag":
                for code in codes:
                    if (code, item, turn) in replies:
                        out.append(
                            _Judgment(
                                f"flag:{rubric.name}:{item}:{turn}:{code}",
                                "confirmatory",
                                "confirmatory",
                                item,
                                turn,
                                said,
                                [replies[(code, item, turn)]],
                                [code],
                            )
                        )
                continue
            for a, b in combinations(codes, 2):
                if (a, item, turn) in replies and (b, item, turn) in replies:
                    name = f"pair:{rubric.name}:{item}:{turn}:{a}-{b}"
                    out.append(self._pair(name, "confirmatory", item, turn, said, a, b))
        return out

    def _pair(
        self, name: str, role: Role, item: str, turn: int, said: list[str], a: str, b: str
    ) -> _Judgment:
        """Two codes' replies to one turn, shown in an order drawn from the plan's seed."""
        pair = [a, b] if self.rng.random() < 0.5 else [b, a]
        replies = self.source.replies
        texts = [replies[(c, item, turn)] for c in pair]
        return _Judgment(name, role, "confirmatory", item, turn, said, texts, pair)

    def _aa(self, rubric: Rubric) -> list[_Judgment]:
        assert self.source.aa_codes is not None
        first, second = self.source.aa_codes
        replies, out = self.source.replies, []
        for item, turn in self._turns(rubric):
            if (first, item, turn) in replies and (second, item, turn) in replies:
                said = self.source.messages[(item, turn)]
                name = f"aa:{rubric.name}:{item}:{turn}"
                out.append(self._pair(name, "aa", item, turn, said, first, second))
        return out

    def _new_id(self) -> str:
        while True:
            task_id = f"{self.rng.getrandbits(48):012x}"
            if task_id not in self.ids:
                self.ids.add(task_id)
                return task_id

    def _add(self, rubric: Rubric, j: _Judgment, repeat: bool) -> None:
        orders: list[tuple[Literal["first", "swapped"] | None, list[int]]]
        orders = (
            [("first", [0, 1]), ("swapped", [1, 0])] if rubric.kind == "pairwise" else [(None, [0])]
        )
        for judge in self.judges:
            for order, index in orders:
                labels = [j.labels[i] for i in index]
                texts = [j.texts[i] for i in index]
                if j.qa is not None:
                    prompt, expect = qa_prompt(*j.qa, texts[0]), j.expect_flag
                elif rubric.kind == "flag":
                    prompt, expect = flag_prompt(rubric, j.messages, texts[0]), j.expect_flag
                else:
                    prompt = pairwise_prompt(rubric, j.messages, texts[0], texts[1])
                    expect = (
                        j.expect_flag  # a padded pair: "TIE"; near-identical: None
                        if j.winner is None
                        else f"Reply {labels.index(j.winner) + 1}"
                    )
                first = self._task(rubric, j, judge, order, labels, expect, prompt, None)
                if repeat:
                    self._task(rubric, j, judge, order, labels, expect, prompt, first.id)

    def _task(
        self,
        rubric: Rubric,
        j: _Judgment,
        judge: Judge,
        order: Literal["first", "swapped"] | None,
        labels: list[str],
        expect: str | None,
        prompt: str,
        repeat_of: str | None,
    ) -> JudgmentTask:
        task = JudgmentTask(
            id=self._new_id(),
            judgment=j.name,
            rubric=rubric.name,
            kind=rubric.kind,
            judge=judge.name,
            role="repeat" if repeat_of else j.role,
            phase=j.phase,
            item=j.item,
            turn=j.turn,
            labels=labels,
            order=order,
            control=j.control,
            strength=j.strength,
            expect=expect,
            repeat_of=repeat_of,
            prompt_sha256=sha256_bytes(prompt.encode("utf-8")),
            question_type=j.qa[0] if j.qa is not None else None,
        )
        self.tasks.append(Planned(task, prompt))
        return task
