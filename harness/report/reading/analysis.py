"""`--analysis FILE.toml`: the study's frozen analysis plan, read by `harness report` for its
verdicts (harness/report/confirmatory/decision.py). Its SHA-256 is printed in every report that
uses it.

    schema = 1
    alpha = 0.05            # one-sided, per test, before Holm across the family
    power = 0.80            # for the minimum detectable effect
    resamples = 10000
    seed = 1
    [arms]                  # the roles the rules name -> the runs' arm names
    B = "bare"
    C1 = "retrieval"
    contrasts = ["C1 - B"]  # each a candidate role minus the baseline role
    [[endpoints]]
    name = "preference"     # the metric it reads (a judgment set's rubric, a JSONL metric)
    metric = "better_reply"
    higher_is_better = true # false for a violation flag
    margin = 0.05           # the non-inferiority margin, on the metric's scale
    planned_n = 10          # items (clusters) the protocol planned
    family = true           # in the Holm family (the confirmatory endpoints)
    [[gates]]               # validity gates: each must pass, or the outcome is NO VERDICT
    name = "judges"         # judges | aa | stability | determinism | n
    [[ceilings]]            # the candidate's reading against the baseline's times `at_most`
    name = "cost"
    measure = "cost_per_turn"   # cost_per_turn | last_token_p95 | first_token_p95
    role = "C1"
    at_most = 1.5
    [interim]
    at_n = 5                # the look at n items; absent: no interim look
    z = 3.29                # an axis stops for efficacy or harm at |z| >= this
    [[rules]]               # the first rule whose every condition holds gives the outcome
    outcome = "KILL"
    when = ["any C1 - B WORSE"]
    ...
    [[rules]]
    outcome = "NOT SHOWN"
    when = []               # the last rule has no condition: it always holds

Conditions: `any|all|no CONTRAST STATUS[|STATUS...]` over the family endpoints of a contrast
(STATUS: BETTER, NON-INFERIOR, WORSE, NOT SHOWN, or BELOW-SIZING: the upper bound below the
endpoint's sizing margin), optionally `on NAME[,NAME...]` (those endpoints, in the family or not)
or `except NAME[,NAME...]` (the family without them); `gates passed`, `gates failed`, `ceiling
NAME held|broken`. A gate that failed or was not run gives NO VERDICT before any rule is read.
An endpoint's optional fields state the study design's other conditions (harness/stats/rules.py):
`sizing_margin`, `superiority_only`, `judges_on_side`, `leave_one_out`, `same_sign_by` (a regex
naming an item's dataset), `card_pattern` (a regex naming an item's card: two-level resampling,
cards then scripts, and cards left out one at a time), `served_by_reuse` and `planning_sd` (the
standard deviation of a cluster's effect, for `harness plan simulate`).
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

OUTCOMES = ("GO", "GO-COST", "PORT", "KILL", "NOT SHOWN", "NO VERDICT")
STATUSES = ("BETTER", "NON-INFERIOR", "WORSE", "NOT SHOWN")
READINGS = (*STATUSES, "BELOW-SIZING")
_READING = "|".join(re.escape(s) for s in READINGS)
CONDITION = re.compile(
    rf"^(?:(?P<quant>any|all|no) (?P<contrast>\w+ - \w+) "
    rf"(?P<status>(?:{_READING})(?:\|(?:{_READING}))*)"
    r"(?: (?P<scope>on|except) (?P<names>[\w-]+(?:,[\w-]+)*))?"
    r"|gates (?P<gates>passed|failed)"
    r"|ceiling (?P<ceiling>[\w-]+) (?P<held>held|broken))$"
)


class _Plan(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Endpoint(_Plan):
    name: str
    metric: str
    higher_is_better: bool = True
    margin: float = Field(ge=0)
    planned_n: int = Field(ge=1)
    family: bool = True
    # The study design's conditions (harness/stats/rules.py), each off unless stated.
    sizing_margin: float | None = Field(None, ge=0)  # the effect the study is sized to detect
    superiority_only: bool = False  # no non-inferiority reading (S1): BETTER, WORSE or NOT SHOWN
    judges_on_side: bool = False  # BETTER needs each judge's own mean on the candidate's side
    leave_one_out: bool = False  # BETTER needs the sign kept with any one card/cluster left out
    same_sign_by: str | None = None  # regex whose group 1 names an item's dataset: BETTER
    # needs the sign in every dataset (R1: LongMemEval-S and LoCoMo)
    card_pattern: str | None = None  # regex whose group 1 names an item's card: two levels
    served_by_reuse: bool = False  # C1's replies are C0's: the contrasts count once in Holm
    planning_sd: float | None = Field(None, gt=0)  # sd of a cluster's effect, for simulate


class Gate(_Plan):
    name: Literal["judges", "aa", "stability", "determinism", "n"]


class Ceiling(_Plan):
    name: str
    measure: Literal["cost_per_turn", "last_token_p95", "first_token_p95"]
    role: str
    at_most: float = Field(gt=0)


class Interim(_Plan):
    at_n: int = Field(ge=1)
    z: float = Field(3.29, gt=0)  # |z| at or above stops an axis for efficacy or harm


class Rule(_Plan):
    outcome: Literal["GO", "GO-COST", "PORT", "KILL", "NOT SHOWN", "NO VERDICT"]
    when: list[str]


class Analysis(_Plan):
    schema_: Literal[1] = Field(1, alias="schema")
    alpha: float = Field(gt=0, lt=0.5)
    power: float = Field(0.8, gt=0, lt=1)
    resamples: int = Field(10_000, ge=100)
    seed: int = 0
    arms: dict[str, str]
    contrasts: list[str] = Field(min_length=1)
    endpoints: list[Endpoint] = Field(min_length=1)
    gates: list[Gate] = Field(default_factory=list)
    ceilings: list[Ceiling] = Field(default_factory=list)
    interim: Interim | None = None
    rules: list[Rule] = Field(min_length=1)
    sha256: str = ""  # the file's, filled in by load_analysis

    @model_validator(mode="after")
    def _consistent(self) -> Analysis:
        for contrast in self.contrasts:
            roles = contrast.split(" - ")
            if len(roles) != 2 or any(r not in self.arms for r in roles):
                raise ValueError(f"contrast {contrast!r} must be `ROLE - ROLE` of [arms]")
        names = [e.name for e in self.endpoints]
        if len(set(names)) != len(names):
            raise ValueError("two endpoints share a name")
        ceilings = {c.name for c in self.ceilings}
        for ceiling in self.ceilings:
            if ceiling.role not in self.arms:
                raise ValueError(f"ceiling {ceiling.name!r} names role {ceiling.role!r}")
        for rule in self.rules:
            for condition in rule.when:
                found = CONDITION.match(condition)
                if found is None:
                    raise ValueError(f"rule {rule.outcome}: cannot read condition {condition!r}")
                if found["contrast"] and found["contrast"] not in self.contrasts:
                    raise ValueError(f"rule {rule.outcome}: {found['contrast']!r} is not declared")
                if found["ceiling"] and found["ceiling"] not in ceilings:
                    raise ValueError(f"rule {rule.outcome}: no ceiling {found['ceiling']!r}")
                for name in (found["names"] or "").split(",") if found["names"] else []:
                    if name not in names:
                        raise ValueError(f"rule {rule.outcome}: no endpoint {name!r}")
        if self.rules[-1].when:
            raise ValueError("the last rule must have no condition (`when = []`): it always holds")
        for ep in self.endpoints:
            for field, pattern in (("card_pattern", ep.card_pattern),
                                   ("same_sign_by", ep.same_sign_by)):  # fmt: skip
                if pattern is None:
                    continue
                try:
                    groups = re.compile(pattern).groups
                except re.error as e:
                    raise ValueError(f"endpoint {ep.name}: {field}: {e}") from None
                if groups < 1:
                    raise ValueError(f"endpoint {ep.name}: {field} needs a group (what it names)")
        return self

    def role_of(self, contrast: str) -> tuple[str, str]:
        candidate, baseline = contrast.split(" - ")
        return candidate, baseline


def load_analysis(path: Path) -> Analysis:
    data = path.read_bytes()
    try:
        plan = Analysis.model_validate(tomllib.loads(data.decode("utf-8")))
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(the plan)"
        raise ValueError(f"{where}: {first['msg']}") from None
    return plan.model_copy(update={"sha256": hashlib.sha256(data).hexdigest()})
