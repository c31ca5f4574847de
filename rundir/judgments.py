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

import hashlib
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rundir.atomic import write_atomic
from rundir.errors import RunDirError, SchemaTooNew
from rundir.jsonlines import read_lines
from rundir.model import RunDirModel, schema_too_new

JUDGMENT_SET_SCHEMA: Literal[1] = 1
MANIFEST_FILE = "judgments.json"
TASKS_FILE = "tasks.jsonl"
VOTES_FILE = "votes.jsonl"
EXACT_FILE = "exact.jsonl"
PROMPTS_DIR = "prompts"
REPLIES_DIR = "replies"

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


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class JudgePin(_Record):
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


class RubricRef(_Record):
    name: str
    version: str
    kind: Kind
    file: str
    sha256: str


class RunRef(_Record):
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


class BarResult(_Record):
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


class AAResult(_Record):
    rubric: str
    arm_code: str
    pairs: int
    needed: int
    win_rate: float | None
    low: float | None
    high: float | None
    status: Literal["passed", "failed", "incomplete", "not run"]
    detail: str


class AxisStatus(_Record):
    rubric: str
    status: AxisState
    reasons: list[str]


class ThirdPass(_Record):
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


class SetAside(_Record):
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


class SealedArm(_Record):
    run: str
    arm: str


class Seal(RunDirModel):
    schema_: Literal[1] = Field(JUDGMENT_SET_SCHEMA, alias="schema")
    stage: str
    seed: int
    codes: dict[str, SealedArm]
    # The SHA-256 of the set's judgments.json as the stage wrote it (`bind_seal`): a manifest
    # edited afterwards is refused. The manifest holds the hash of the seal without this field.
    manifest_sha256: str | None = None


_T = TypeVar("_T", bound=RunDirModel)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _dump(model: BaseModel) -> str:
    return json.dumps(model.model_dump(mode="json", by_alias=True), indent=2) + "\n"


def _seal_body_sha(seal: Seal) -> str:
    """The SHA-256 the manifest holds: the seal as written before it was bound to the manifest."""
    body = seal.model_dump(mode="json", by_alias=True, exclude={"manifest_sha256"})
    return sha256_bytes((json.dumps(body, indent=2) + "\n").encode("utf-8"))


def write_seal(path: Path, seal: Seal) -> str:
    """Write the seal (owner-readable only) and return its SHA-256 for the manifest."""
    write_atomic(path, _dump(seal.model_copy(update={"manifest_sha256": None})), mode=0o600)
    return _seal_body_sha(seal)


def bind_seal(path: Path, set_dir: Path) -> None:
    """Write into the seal the SHA-256 of the set's judgments.json, once it is written: the seal,
    kept outside the set, then says which manifest is the stage's own."""
    seal = Seal.model_validate_json(path.read_bytes())
    bound = seal.model_copy(
        update={"manifest_sha256": sha256_bytes((set_dir / MANIFEST_FILE).read_bytes())}
    )
    write_atomic(path, _dump(bound), mode=0o600)


def write_manifest(set_dir: Path, manifest: JudgmentSet) -> None:
    write_atomic(set_dir / MANIFEST_FILE, _dump(manifest))


def write_tasks(set_dir: Path, tasks: list[JudgmentTask]) -> str:
    text = "".join(task.model_dump_json(by_alias=True) + "\n" for task in tasks)
    write_atomic(set_dir / TASKS_FILE, text)
    return sha256_bytes(text.encode("utf-8"))


class VoteLog:
    """votes.jsonl, appended as replies arrive (a stage that dies keeps what it was told)."""

    def __init__(self, set_dir: Path) -> None:
        self._file: IO[str] = open(set_dir / VOTES_FILE, "a", encoding="utf-8")  # noqa: SIM115
        # Judges answer on several threads; one line must never interleave with another.
        self._lock = threading.Lock()

    def append(self, vote: Vote, then: Callable[[], None] | None = None) -> None:
        """Append one line; `then` runs under the same lock, so what it records follows the
        file's order (the running watch, which a re-check replays from this file)."""
        line = vote.model_dump_json(by_alias=True) + "\n"
        with self._lock:
            self._file.write(line)
            self._file.flush()
            if then is not None:
                then()

    def close(self) -> None:
        self._file.close()


def _invalid(
    path: Path, error: ValidationError | json.JSONDecodeError, line: int = 0
) -> RunDirError:
    where = f"{path}:{line}" if line else str(path)
    if isinstance(error, json.JSONDecodeError):
        return RunDirError(
            f"{where}: not JSON: {error.msg}", hint="the set is damaged: judge again"
        )
    too_new = schema_too_new(error)
    if too_new is not None:
        return SchemaTooNew(f"{where}: {too_new.message}", hint=too_new.hint)
    first = error.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or "(the record)"
    return RunDirError(f"{where}: {field}: {first['msg']}", hint="the set is damaged: judge again")


def _read_lines(path: Path, model: type[_T]) -> list[_T]:
    if not path.exists():
        raise RunDirError(f"{path} is missing", hint="give the folder `harness judge --out` wrote")
    out = []
    for number, line in enumerate(read_lines(path), 1):
        if line.strip():
            try:
                out.append(model.model_validate_json(line))
            except ValidationError as e:
                raise _invalid(path, e, number) from None
    return out


def read_manifest(set_dir: Path) -> JudgmentSet:
    path = set_dir / MANIFEST_FILE
    try:
        return JudgmentSet.model_validate_json(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RunDirError(
            f"{set_dir} is not a judgment set (no {MANIFEST_FILE})",
            hint="give the folder `harness judge --out` wrote",
        ) from None
    except ValidationError as e:
        raise _invalid(path, e) from None


def write_exact(set_dir: Path, records: list[ExactMatch]) -> str | None:
    if not records:
        return None
    text = "".join(r.model_dump_json(by_alias=True) + "\n" for r in records)
    write_atomic(set_dir / EXACT_FILE, text)
    return sha256_bytes(text.encode("utf-8"))


def read_exact(set_dir: Path) -> list[ExactMatch]:
    if not (set_dir / EXACT_FILE).exists():
        return []
    return _read_lines(set_dir / EXACT_FILE, ExactMatch)


def read_tasks(set_dir: Path) -> list[JudgmentTask]:
    return _read_lines(set_dir / TASKS_FILE, JudgmentTask)


def read_votes(set_dir: Path) -> list[Vote]:
    return _read_lines(set_dir / VOTES_FILE, Vote)


def read_seal(set_dir: Path, seal_path: Path) -> Seal:
    """The seal of `set_dir`, checked against the hash its manifest holds (not yet whether it
    binds the manifest as it is now: `seal_binding`)."""
    manifest = read_manifest(set_dir)
    try:
        data = seal_path.read_bytes()
    except OSError as e:
        raise RunDirError(f"cannot read the seal {seal_path}: {e}", hint="give --seal") from None
    try:
        seal: Seal | None = Seal.model_validate_json(data)
    except ValidationError:
        seal = None  # not a seal: not this set's either
    if seal is None or _seal_body_sha(seal) != manifest.seal_sha256:
        raise RunDirError(
            f"{seal_path} is not the seal of {set_dir} (its SHA-256 differs from the manifest's)",
            hint="give the seal file `harness judge` wrote beside this set",
        )
    if seal.stage != manifest.stage:
        raise RunDirError(f"{seal_path} seals stage {seal.stage!r}, the set is {manifest.stage!r}")
    return seal


def seal_binding(set_dir: Path, seal_path: Path, seal: Seal) -> str | None:
    """Why the set's judgments.json is not the one its seal binds (None: it is)."""
    if seal.manifest_sha256 is None:
        return (
            f"{seal_path} binds no manifest: {MANIFEST_FILE} cannot be told from an edited one "
            "(judge again: a stage binds its seal to the manifest it writes)"
        )
    if sha256_bytes((set_dir / MANIFEST_FILE).read_bytes()) != seal.manifest_sha256:
        return (
            f"{MANIFEST_FILE} is not the manifest its seal binds (SHA-256 in {seal_path.name}): "
            "it was changed after judging"
        )
    return None


def open_seal(set_dir: Path, seal_path: Path) -> Seal:
    """The seal of `set_dir`, checked against the hash its manifest holds, and binding the
    manifest as it is: analysis only."""
    seal = read_seal(set_dir, seal_path)
    unbound = seal_binding(set_dir, seal_path, seal)
    if unbound is not None:
        raise RunDirError(
            f"{set_dir}: {unbound}",
            hint="judge again; a judgment set's manifest is written once, by `harness judge`",
        )
    return seal
