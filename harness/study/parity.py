"""Engine parity as a study setting (issue 36 item 5, the design's V9): the memory arms a study
compares recall as many memories, answer with one model under one output limit and one answer
prompt, and embed with one model, whatever each arm's own defaults.

    [parity]
    arms = ["mem0", "retrieval"]      # the memory arms under parity (two or more)
    top_k = 5                         # memories recalled per turn
    answer_model = "gpt-4.1-mini"     # the model every answer (main) call names
    answer_max_tokens = 512           # the answer call's output limit
    answer_prompt = "You answer from what you remember of the user."
    embed_model = "text-embedding-3-small"

The fields set are handed to each arm over the seam when its session opens (`OpenSession.parity`,
arms/seam.py EngineParity), recorded in run.json (`study.parity`), and checked across the arms in
the captured requests (harness/checks/audit/parity.py). An arm under parity that sets one of them
its own way (ARM_TOP_K = "8" in its env while top_k = 5) is refused when the study loads: a
study cannot say both.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import Field

from arms.seam import EngineParity

# The arm environment variable each parity field would otherwise come from (arms/chat.py,
# arms/engine.py, arms/retrieval): one set to another value is an arm overriding the study.
ARM_ENV: dict[str, str] = {
    "top_k": "ARM_TOP_K",
    "answer_model": "ARM_MODEL",
    "answer_max_tokens": "ARM_MAX_TOKENS",
    "answer_prompt": "ARM_ANSWER_PROMPT",
    "embed_model": "ARM_EMBED_MODEL",
}


class Parity(EngineParity):
    arms: list[str] = Field(min_length=2)

    def handed(self) -> EngineParity:
        """What each arm under parity gets over the seam (the fields set)."""
        return EngineParity.model_validate(self.model_dump(exclude={"arms"}))

    def fixed(self) -> dict[str, object]:
        """The fields set, for run.json and the audit."""
        return self.model_dump(exclude={"arms"}, exclude_none=True)


def parity_problems(parity: Parity | None, envs: Mapping[str, Mapping[str, str]]) -> list[str]:
    """What is wrong with a study's `[parity]` ([] when nothing is): an arm it names that the
    study does not have, no field fixed, or an arm whose environment sets a fixed field
    another way. `envs` is each arm's environment as the study gives it."""
    if parity is None:
        return []
    problems: list[str] = []
    unknown = [arm for arm in parity.arms if arm not in envs]
    if unknown:
        problems.append(f"parity.arms: {', '.join(unknown)} not an arm of the study")
    if len(set(parity.arms)) != len(parity.arms):
        problems.append("parity.arms: an arm is named twice")
    fixed = parity.fixed()
    if not fixed:
        problems.append(f"parity: fixes nothing; set one of {', '.join(ARM_ENV)}")
    for arm in parity.arms:
        env = envs.get(arm, {})
        for name, value in fixed.items():
            variable = ARM_ENV[name]
            if variable in env and env[variable] != str(value):
                problems.append(
                    f"arm {arm!r} sets {variable}={env[variable]!r} but [parity] {name} = "
                    f"{value!r}: remove it from the arm (parity is handed over the seam)"
                )
    return problems


def parity_for(parity: Parity | None, arm: str) -> EngineParity | None:
    """What `arm`'s sessions are opened with: the study's parity if it names the arm."""
    return parity.handed() if parity is not None and arm in parity.arms else None
