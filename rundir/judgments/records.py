"""Judgment sets: what `harness judge` leaves in `--out SET`, for the report and the audit.

A set is a folder:
- `judgments.json`: the manifest (`JudgmentSet`): the runs judged, the judges' pins, the rubrics'
  and prompt templates' hashes, the seal's hash, the calibration bars, stability, the A/A control,
  each axis's status, the judgments set aside and any halt;
- `tasks.jsonl`: every prompt the stage planned (`JudgmentTask`), written before any was sent;
- `prompts/<task>.txt`: the prompt file of each task (its SHA-256 is in the task);
- `replies/<task>.<attempt>.txt`: every reply a judge gave, kept whether it was accepted or not;
- `votes.jsonl`: one `Vote` per attempt, tying a reply to its prompt and saying what was parsed,
  with the pins (engine, model, effort) of the judge asked: judges' calls are billed outside the
  run's ledger, so this log is their record;
- `exact.jsonl`: the probe answers a grading rubric settled by normalised exact match
  (`ExactMatch`), which no judge was asked about.

Replies are named in tasks only by arm codes. The codes' meaning (code -> run and arm) and the
seed they were drawn from are in the seal (`Seal`), a file stored outside the set whose SHA-256 the
manifest holds: analysis opens it (`open_seal`), and a seal that does not match is refused.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from rundir.model import RunDirModel

JUDGMENT_SET_SCHEMA: Literal[1] = 1

# qa: an answer graded against its gold answer (LongMemEval's prompts), "yes" or "no".
Kind = Literal["flag", "pairwise", "qa"]
# confirmatory: a reply (or pair) of the runs; control: a planted control (calibration or mixed
# into the confirmatory set); repeat: a second asking of a task for stability; aa: the A/A pair.
Role = Literal["confirmatory", "control", "repeat", "aa"]
Phase = Literal["calibration", "confirmatory"]
# strong/mild: a perturbed reply that must be flagged; clean: an unperturbed one that must not;
# pairwise: an original against its perturbed copy (the original must win); near_identical: two
# copies differing in form only (the verdict must not follow the order). A qa control's answer is
# its gold (clean: must be graded right) or another question's gold (strong: must be wrong).
Strength = Literal["strong", "mild", "clean", "pairwise", "near_identical"]
VoteStatus = Literal["accepted", "wrong_pin", "unparseable", "client_failed"]
AxisState = Literal["passed", "no verdict", "incomplete"]


class SetRecord(BaseModel):
    """A part of a set's record: frozen, and no field it does not define."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class JudgePin(SetRecord):
    """A judge as the study pins it: who answers (engine, model, effort) and how it is reached."""

    name: str
    engine: str
    model: str
    effort: str
    client: Literal["command", "http"]
    command: list[str] | None = None
    url: str | None = None
    # The third judge: asked only in a third pass (when two judges' agreement falls short).
    third: bool = False
    # An HTTP judge: the dated snapshots of `model` its vendor may name as the model answering.
    snapshots: list[str] = Field(default_factory=list)
    # A command judge: what its box enforced while it answered (harness/judge/box.py), or what
    # could not be ("not enforced: ..."); empty for an HTTP judge or an older set.
    box: list[str] = Field(default_factory=list)


class RubricRef(SetRecord):
    name: str
    version: str
    kind: Kind
    file: str
    sha256: str


class RunRef(SetRecord):
    run_id: str
    study_sha256: str
    items_sha256: str
    turns_sha256: str


class JudgmentTask(RunDirModel):
    """One prompt to one judge. `labels` are what the prompt shows, in order: an arm code for a
    reply of the runs, `code*kind` for a perturbed copy of that code's reply (a control)."""

    schema_: Literal[1] = Field(JUDGMENT_SET_SCHEMA, alias="schema")
    id: str
    judgment: str  # the judgment this vote belongs to; its full vote set is judges x orders
    rubric: str
    kind: Kind
    judge: str
    role: Role
    phase: Phase
    item: str | None = None
    turn: int | None = None
    labels: list[str]
    order: Literal["first", "swapped"] | None = None  # pairwise: which of the two orders
    control: str | None = None  # the perturbation, for a control
    strength: Strength | None = None
    expect: str | None = None  # the verdict a control must get (None: no single right one)
    repeat_of: str | None = None
    # The third pass's re-ask form: this calibration task asked again (a fresh prompt file with
    # the same text and codes) because the two judges disagreed on it.
    reask_of: str | None = None
    prompt_sha256: str
    # qa: the LongMemEval question type whose prompt was used (LoCoMo's category mapped to it).
    question_type: str | None = None


class Vote(RunDirModel):
    """One attempt at one task: the reply as received and what was made of it."""

    schema_: Literal[1] = Field(JUDGMENT_SET_SCHEMA, alias="schema")
    task: str
    judge: str
    attempt: int
    prompt_sha256: str
    reply_file: str | None  # relative to the set; None when the client gave no reply at all
    reply_sha256: str | None
    status: VoteStatus
    verdict: str | None = None
    detail: str | None = None
    elapsed_s: float
    # The pins of the judge asked, on every call (None only in sets written before they were).
    engine: str | None = None
    model: str | None = None
    effort: str | None = None
    # What an HTTP judge's call was billed: tokens as the vendor reported them and their cost
    # at the price table (a decimal string); None for a command judge or an older set.
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: str | None = None
    unpriced: str | None = None  # why cost_usd is missing although the call was answered


class ExactMatch(RunDirModel):
    """A probe answer that matched its gold after normalisation: settled without a judge."""

    schema_: Literal[1] = Field(JUDGMENT_SET_SCHEMA, alias="schema")
    judgment: str
    rubric: str
    label: str  # the arm code whose answer it is
    item: str
    turn: int
    gold: str
    answer: str


class BarResult(SetRecord):
    """One bar of calibration or stability, for one judge (or the pair of judges) and rubric."""

    rubric: str
    judge: str  # a judge's name, or "a+b" for an agreement between two
    bar: str
    value: float | None
    threshold: float
    op: Literal[">=", "<="]
    held: int  # items the bar was planned on
    answered: int  # items with every vote it needs
    status: Literal["passed", "failed", "incomplete"]
    interval: tuple[float, float] | None = None  # a 95% Clopper-Pearson interval of a rate


class AAResult(SetRecord):
    rubric: str
    arm_code: str
    pairs: int
    needed: int
    win_rate: float | None
    low: float | None
    high: float | None
    status: Literal["passed", "failed", "incomplete", "not run"]
    detail: str


class AxisStatus(SetRecord):
    rubric: str
    status: AxisState
    reasons: list[str]


class ThirdPass(SetRecord):
    """A rubric whose two judges agreed less than its bar: the third judge is calibrated on the
    same controls and, when it passes, judges every judgment beside them (three votes per
    prompt, the majority's share is the outcome)."""

    rubric: str
    trigger: list[str]  # the agreement bars that fell short, e.g. "alpha+beta kappa 0.41 < 0.60"
    judge: str | None  # the third judge; None when judges.toml pins none, or in the re-ask form
    status: Literal["resolved", "failed", "not run"]
    detail: str
    # "judge": a third judge (third = true); "reask": the disagreeing prompts asked again of
    # both judges (judges.toml's third = "reask"), the tasks re-asked listed in `reasked`.
    form: Literal["judge", "reask"] = "judge"
    reasked: list[str] = Field(default_factory=list)


class SetAside(SetRecord):
    judgment: str
    rubric: str
    missing: list[str]  # the votes it lacks: "judge/order"


class JudgmentSet(RunDirModel):
    schema_: Literal[1] = Field(JUDGMENT_SET_SCHEMA, alias="schema")
    stage: str
    written: str
    tool_version: str
    runs: list[RunRef]
    aa_run: RunRef | None = None
    judges: list[JudgePin]
    rubrics: list[RubricRef]
    templates: dict[str, str]  # prompt template name -> SHA-256
    seal_sha256: str
    tasks_sha256: str
    votes_sha256: str
    exact_sha256: str | None = None  # exact.jsonl, when a grading rubric settled any
    calibration: list[BarResult] = Field(default_factory=list)
    running: list[BarResult] = Field(default_factory=list)  # the mixed-in controls' detection
    stability: list[BarResult] = Field(default_factory=list)
    aa: list[AAResult] = Field(default_factory=list)
    axes: list[AxisStatus] = Field(default_factory=list)
    set_aside: list[SetAside] = Field(default_factory=list)
    halts: list[str] = Field(default_factory=list)
    third_pass: list[ThirdPass] = Field(default_factory=list)
    # What the stage was given that a re-check (harness/judge/recheck.py) needs to derive the
    # fields above again: the third pass's form (judges.toml's third = "reask", else a third
    # judge), the A/A pairs needed, and the A/A interval's bootstrap resamples (its seed is the
    # seal's).
    third_form: Literal["judge", "reask"] = "judge"
    aa_pairs: int = 30
    resamples: int = 10_000

    def voters(self, rubric: str) -> set[str]:
        """The judges whose votes make a judgment of `rubric` whole."""
        resolved = any(p.rubric == rubric and p.status == "resolved" for p in self.third_pass)
        return {j.name for j in self.judges if resolved or not j.third}
