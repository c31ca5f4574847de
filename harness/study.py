"""The study file (`study.toml`): what to run, on which arms, under which rules.

    name = "quickstart"
    arms = ["bare", "retrieval"]          # services of compose.yaml next to this file, or:
    [arms.bare]                           # ... a table per arm (command + env) when there is none
    command = "python -m arms.bare"
    env = { ARM_MODEL = "gpt-4.1-mini" }

    items = "items.jsonl"                 # {"id", "clock", "turns": [{"user", "addon"?}], ...}
                                          # or a memory benchmark: [items] format = "longmemeval"
                                          # | "locomo" | "jsonl", path, n, seed, stratify,
                                          # per_conversation_max (harness/datasets/source.py)
    ingest_deadline_ms = 120000           # per history session ingested (memory benchmarks)
                                          # a turn's "expect": ["word"] / "expect_regex": a
                                          # memory control (harness/checks/memory_controls.py)
    deadline_ms = 60000                   # per turn, wall time at the seam
    arm_order_seed = 7
    stubs = "stubs.toml"                  # record mode's replies (optional)
    prices = "prices.toml"                # live mode's price table (optional: packaged one)
    ledger = "ledger.jsonl"               # or "postgresql://user@host/db" (one cap across
                                          # machines; $HARNESS_LEDGER_URL overrides it)
    ledger_repo = "../ledger.git"         # live: commit the ledger to a private branch of this
    ledger_branch = "harness-ledger"      # git repository after every run (docs/ledger-branch.md)
    stage = "default"
    stage_cap = "10"
    mask = ["messages.0.content"]         # extra volatile body paths (harness/checks/masks.py)
    ca_bundle = "corp-ca.pem"             # live: also trust this CA for the vendors' TLS
    cap_add = ["NET_BIND_SERVICE"]        # docker: capabilities every arm gets back (none by
                                          # default; per arm: [arms.X] cap_add = [...])
    on_stray = "halt"                     # a refused connection halts the run at once, or
                                          # "fail": the run goes on and fails at its end
    workers = 1                           # items in parallel on N sets of arms (--workers)
    subject = "openai/gpt-4.1-mini"       # the model under study, named in the report
    [coupling]                            # arms coupled within each turn (docs/coupled.md):
    order = ["B", "C0", "C1"]             # these lead every turn, the rest seeded per item
    addon_from = "B"                      # its turn context goes to the later arms of the turn
    [[gate.pairs]]                        # the cross-arm gate (harness/checks/pair_gate.py)
    arms = ["C0", "C1"]                   # leader, follower
    differ_by = "elements.txt"            # the elements file (harness/checks/elements.py)
    [parity]                              # engine parity across memory arms (harness/parity.py)
    arms = ["mem0", "retrieval"]          # handed over the seam; an arm's own setting refused
    top_k = 5                             # also answer_model, answer_max_tokens,
    answer_model = "gpt-4.1-mini"         # answer_prompt, embed_model
    [protocol]                            # the study's registered protocol (docs/protocol.md)
    frozen = ["protocol/0a.md"]           # files frozen by `harness protocol freeze`: a run
                                          # refuses once one's bytes differ from its lock
    addendum = "protocol/addendum.toml"   # dated amendments, records and deviations
    [limits]                              # every arm's bounds, here their defaults
    pids = 512                            # processes and threads
    memory = "2g"                         # RAM, and no swap
    cpus = 1.0                            # cores
    disk = "2g"                           # its log, egress folder and /tmp together
    [verdict]                             # when an arm's outcomes fail the run:
    max_failure_rate = 0.5                # more of its turns cut, error or resource_limit
                                          # than this fraction (and: no turn done)
    [vendors]                             # base URL overrides for live mode
    openai = "https://api.openai.com"
    [pins]                                # pinned sampling (vendors/pins.py Pins), every mode
    temperature = 0
    output_cap = 6000                     # main calls' output cap (the default; 0 = none)
    from_arm = "B"                        # B's captured main request's sampling fields pin the
                                          # other arms' (B leads [coupling] order)
    [guard]                               # every arm's final text per turn (harness/guard.py)
    command = ["python", "guard.py"]      # text on stdin; last stdout line {"pass": bool}
    [purposes.utility]                    # a call with no X-Harness-Purpose header whose
    route = "openai.chat"                 # route (stubs/routes.py names) and model (a shell
    model = "gpt-4.1-nano*"               # pattern) match gets this purpose; first rule wins,
                                          # either may be left out; else the route's default

Every problem is reported before anything starts, naming the file, the field and what to do,
because a study that dies after ten minutes of arm start-up wastes the user's time (and, live,
money).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import tomllib
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from harness.coupling import Coupling, GateSection, coupling_problems
from harness.datasets.draw import Drawn
from harness.datasets.index import file_sha256
from harness.datasets.model import DatasetError, Memory
from harness.datasets.source import ItemsSource, draw_from, load_drawn
from harness.errors import HarnessError
from harness.guard import GuardSpec
from harness.parity import Parity, parity_problems
from ledger.errors import LedgerError
from ledger.ledger import is_url, refuse_password, where
from ledger.pg_store import is_postgres_url
from ledger.usd import BadAmount, parse_usd
from rundir.control.proxy_file import PurposeRule as ProxyPurposeRule
from rundir.jsonlines import read_lines
from rundir.runs.limits import ResourceLimits
from vendors.hosts import VENDORS
from vendors.pins import Pins, PinsError, served_matches

STUDY_SCHEMA = 1
DEFAULT_DEADLINE_MS = 60_000
DEFAULT_INGEST_DEADLINE_MS = 120_000
# Linux capability names (capabilities(7)) a study may give back to an arm container, which
# otherwise starts with none (--cap-drop ALL): a typo must fail before anything starts, not
# reach `docker run` as an unknown name after the proxy is up.
_CAPABILITY_NAMES = (
    "AUDIT_CONTROL AUDIT_READ AUDIT_WRITE BLOCK_SUSPEND BPF CHECKPOINT_RESTORE CHOWN "
    "DAC_OVERRIDE DAC_READ_SEARCH FOWNER FSETID IPC_LOCK IPC_OWNER KILL LEASE "
    "LINUX_IMMUTABLE MAC_ADMIN MAC_OVERRIDE MKNOD NET_ADMIN NET_BIND_SERVICE NET_BROADCAST "
    "NET_RAW PERFMON SETFCAP SETGID SETPCAP SETUID SYS_ADMIN SYS_BOOT SYS_CHROOT "
    "SYS_MODULE SYS_NICE SYS_PACCT SYS_PTRACE SYS_RAWIO SYS_RESOURCE SYS_TIME "
    "SYS_TTY_CONFIG SYSLOG WAKE_ALARM"
)
CAPABILITIES = frozenset(_CAPABILITY_NAMES.split())
# A purpose is a key into pins and delays and a label in reports (proxy/failsafe.py's shape).
_PURPOSE_NAME = re.compile(r"[A-Za-z0-9._:-]{1,64}")


def _capabilities(value: list[str]) -> list[str]:
    """Names as docker takes them (`NET_RAW`; `CAP_NET_RAW` and lower case accepted)."""
    names = [str(v).upper().removeprefix("CAP_") for v in value]
    if "ALL" in names:
        raise ValueError("ALL is not allowed: name each capability the engine needs")
    unknown = [n for n in names if n not in CAPABILITIES]
    if unknown:
        raise ValueError(
            f"unknown capability {', '.join(unknown)}; use Linux names such as NET_BIND_SERVICE"
        )
    return sorted(set(names))


class ArmSpec(BaseModel):
    """How to start one arm: the command (argv) and its extra environment."""

    model_config = ConfigDict(extra="forbid")

    command: list[str] = Field(min_length=1)
    env: dict[str, str] = Field(default_factory=dict)
    # Capabilities this arm's container gets back (docker; it starts with none).
    cap_add: list[str] = Field(default_factory=list)

    @field_validator("cap_add")
    @classmethod
    def _caps(cls, value: list[str]) -> list[str]:
        return _capabilities(value)

    @field_validator("command", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        # compose.yaml and study tables both allow "python -m arms.bare" as one string.
        return shlex.split(value) if isinstance(value, str) else value

    @field_validator("env", mode="before")
    @classmethod
    def _env(cls, value: Any) -> Any:
        if isinstance(value, list):  # compose's ["KEY=value", ...] form
            return dict(str(v).partition("=")[::2] for v in value)
        if isinstance(value, dict):
            return {str(k): "" if v is None else str(v) for k, v in value.items()}
        return value


class TurnScript(BaseModel):
    model_config = ConfigDict(extra="forbid")

    user: str
    addon: str = ""
    # A memory control (harness/checks/memory_controls.py): words (case-insensitive) and a regex the
    # arm must surface in this turn's reply or in its main call's context.
    expect: list[str] = Field(default_factory=list)
    expect_regex: str | None = None

    @field_validator("expect")
    @classmethod
    def _words(cls, value: list[str]) -> list[str]:
        if any(not word.strip() for word in value):
            raise ValueError("an expected word is empty; list the words the arm must surface")
        return value

    @field_validator("expect_regex")
    @classmethod
    def _regex(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as e:
                raise ValueError(f"not a regular expression ({e})") from None
        return value

    @model_validator(mode="after")
    def _not_given(self) -> TurnScript:
        # A word the turn itself says is in the main call's context of every arm, memory or
        # none: such a control could never fail.
        said = f"{self.user}\n{self.addon}".casefold()
        given = [word for word in self.expect if word.casefold() in said]
        if given:
            raise ValueError(
                f"expect {given}: this turn's own text says it, so every arm would pass; "
                "expect what an earlier turn said"
            )
        return self


class Item(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9._:-]+$")
    clock: datetime
    turns: list[TurnScript] = Field(min_length=1)
    context: str | None = None
    # A memory benchmark's question: its history is ingested (once per arm and history) before
    # the turns, which ask the question on a fresh copy of the arm's store.
    memory: Memory | None = None


class PurposeRule(BaseModel):
    """Purpose of a call without an X-Harness-Purpose header, by route and/or model."""

    model_config = ConfigDict(extra="forbid")

    route: str | None = None
    model: str | None = None

    @model_validator(mode="after")
    def _matches_something(self) -> PurposeRule:
        if self.route is None and self.model is None:
            raise ValueError(
                'give route = "..." and/or model = "..." (a rule of neither is every call)'
            )
        return self


# More than half of an arm's turns failing means its figures describe its failures, not its
# answers: the run fails unless the study declares a higher ceiling (harness/checks/arm_verdict.py).
DEFAULT_MAX_FAILURE_RATE = 0.5


class Verdict(BaseModel):
    """When an arm's outcomes fail the run (harness/checks/arm_verdict.py): it completed no turn,
    or more than `max_failure_rate` of its turns were its own failures (cut, error,
    resource_limit). 0 fails the run on any such turn; 1 only on an arm that completed none."""

    model_config = ConfigDict(extra="forbid")

    max_failure_rate: float = Field(DEFAULT_MAX_FAILURE_RATE, ge=0, le=1)


class Protocol(BaseModel):
    """The study's protocol files (harness/protocol/): frozen ones, locked by their SHA-256 in
    protocol.lock.json beside the study, and the addendum that records later changes."""

    model_config = ConfigDict(extra="forbid")

    frozen: list[str] = Field(default_factory=list)
    addendum: str | None = None

    @field_validator("frozen")
    @classmethod
    def _distinct(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("a file is named twice; name each frozen file once")
        return value


class StudyFile(BaseModel):
    """The TOML as written; paths are relative to the study file."""

    model_config = ConfigDict(extra="forbid")

    schema_: int = Field(STUDY_SCHEMA, alias="schema")
    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9._-]+$")
    arms: list[str] | dict[str, ArmSpec]
    items: str | ItemsSource
    deadline_ms: int = Field(DEFAULT_DEADLINE_MS, gt=0)
    ingest_deadline_ms: int = Field(DEFAULT_INGEST_DEADLINE_MS, gt=0)
    arm_order_seed: int = 0
    pins: dict[str, Any] = Field(default_factory=dict)
    purposes: dict[str, PurposeRule] = Field(default_factory=dict)
    prices: str | None = None
    stage: str = "default"
    stage_cap: str | None = None
    ledger: str = "ledger.jsonl"
    # A git repository (relative to the study) whose branch gets the ledger after every live
    # run (ledger/git_branch.py); $HARNESS_LEDGER_GIT / $HARNESS_LEDGER_BRANCH override them.
    ledger_repo: str | None = None
    ledger_branch: str | None = None
    vendors: dict[str, str] = Field(default_factory=dict)
    # A PEM bundle the live proxy trusts for the vendors' TLS (a TLS-inspecting corporate proxy,
    # a local fake vendor); the public CAs stay trusted without it.
    ca_bundle: str | None = None
    stubs: str | None = None
    # Capabilities every arm's container gets back (docker), on top of each arm's own cap_add.
    cap_add: list[str] = Field(default_factory=list)
    # "halt": the first refused connection stops the run at once (the turn in flight is marked
    # stray_connection); "fail": the run goes on and fails at its end.
    on_stray: Literal["halt", "fail"] = "halt"
    # Items run in parallel on this many independent sets of arms (--workers overrides it).
    workers: int = Field(1, ge=1)
    # Every arm's bounds (pids, memory without swap, cpus, disk), applied by the backend.
    limits: ResourceLimits = Field(default_factory=ResourceLimits)
    verdict: Verdict = Field(default_factory=Verdict)
    # Dotted body paths masked from the request hash on top of the defaults
    # (harness/checks/masks.py), for fields an arm fills with a time or a random id: the gate
    # compares masked requests.
    mask: list[str] = Field(default_factory=list)
    # The model under study, "<vendor>/<model>": the report names it (sections 1 and 3).
    subject: str | None = None
    protocol: Protocol = Field(default_factory=Protocol)
    # Arms coupled within each turn, and the pairs the cross-arm gate checks (docs/coupled.md).
    coupling: Coupling | None = None
    gate: GateSection = Field(default_factory=GateSection)
    # Engine parity across memory arms (harness/parity.py, the design's V9).
    parity: Parity | None = None
    # The output guard every arm's final text of every turn is checked by (harness/guard.py).
    guard: GuardSpec | None = None

    @field_validator("subject")
    @classmethod
    def _subject(cls, value: str | None) -> str | None:
        if value is None:
            return value
        vendor, slash, model = value.partition("/")
        if not slash or not model.strip() or vendor not in VENDORS:
            raise ValueError(
                f'{value!r}: give "<vendor>/<model>", e.g. "openai/gpt-4.1-mini" (vendors: '
                f"{', '.join(VENDORS)})"
            )
        return value

    @field_validator("schema_")
    @classmethod
    def _schema(cls, value: int) -> int:
        if value != STUDY_SCHEMA:
            raise ValueError(f"this harness reads study schema {STUDY_SCHEMA}; got {value}")
        return value

    @field_validator("arms")
    @classmethod
    def _some_arms(cls, value: list[str] | dict[str, ArmSpec]) -> list[str] | dict[str, ArmSpec]:
        if not value:
            raise ValueError("name at least one arm")
        return value

    @field_validator("cap_add")
    @classmethod
    def _caps(cls, value: list[str]) -> list[str]:
        return _capabilities(value)

    @field_validator("purposes")
    @classmethod
    def _purpose_names(cls, value: dict[str, PurposeRule]) -> dict[str, PurposeRule]:
        for name in value:
            if not _PURPOSE_NAME.fullmatch(name):
                raise ValueError(
                    f"purpose {name!r}: 1-64 letters, digits, '.', '_', ':' or '-' (e.g. utility)"
                )
        return value

    @field_validator("stage_cap")
    @classmethod
    def _usd(cls, value: str | None) -> str | None:
        if value is not None:
            try:  # the one USD reader, as for --stage-cap; zero closes the stage
                parse_usd(value, "stage_cap", allow_zero=True, example='e.g. stage_cap = "10"')
            except BadAmount as e:
                raise ValueError(str(e)) from None
        return value

    @field_validator("vendors")
    @classmethod
    def _vendors(cls, value: dict[str, str]) -> dict[str, str]:
        for vendor, url in value.items():
            if vendor not in VENDORS:
                raise ValueError(f"unknown vendor {vendor!r}; known: {', '.join(VENDORS)}")
            if not url.startswith(("http://", "https://")):
                raise ValueError(f"{vendor}: base URL must start with http:// or https://")
        return value


class Study(BaseModel):
    """A loaded, checked study: every path resolved, every arm specified, every item read."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    path: Path
    file: StudyFile
    arms: dict[str, ArmSpec]
    items: list[Item]
    pins: Pins
    compose_path: Path | None
    prices_path: Path | None
    stubs_path: Path | None
    ca_bundle_path: Path | None = None
    ledger_path: Path
    # A postgresql:// ledger (the study's `ledger`, or $HARNESS_LEDGER_URL), in place of the file.
    ledger_url: str | None = None
    study_sha256: str
    compose_sha256: str | None
    items_sha256: str
    drawn: Drawn | None = None  # a memory benchmark's draw (counts per stratum)

    @property
    def name(self) -> str:
        return self.file.name

    @property
    def deadline_ms(self) -> int:
        return self.file.deadline_ms

    @property
    def ledger_location(self) -> Path | str:
        """Where live runs are charged: the PostgreSQL URL if there is one, else the file."""
        return self.ledger_url or self.ledger_path

    def capabilities(self, arm: str) -> list[str]:
        """What `arm`'s container gets back on top of none: the study's and the arm's own."""
        return sorted({*self.file.cap_add, *self.arms[arm].cap_add})

    def upstreams(self) -> list[str]:
        return [f"{vendor}={url}" for vendor, url in self.file.vendors.items()]

    def purpose_rules(self) -> list[ProxyPurposeRule]:
        """The `[purposes]` rules in the file's order, as the proxy applies them."""
        return [
            ProxyPurposeRule(purpose=name, route=rule.route, model=rule.model)
            for name, rule in self.file.purposes.items()
        ]


def sha256(path: Path) -> str:
    # In chunks, once per process: a dataset file is hundreds of MB and its index is keyed by it.
    try:
        return file_sha256(path)
    except DatasetError as e:
        raise OSError(str(e)) from None


def _fields(e: ValidationError, prefix: str = "") -> str:
    lines = []
    for err in e.errors(include_url=False):
        where = prefix + ".".join(str(p) for p in err["loc"] if p != "function-after")
        lines.append(f"{where or 'file'}: {err['msg']}")
    return "\n  ".join(lines)


def load_study(path: Path) -> Study:
    """Read and check everything the study names; raises HarnessError saying what to fix."""
    if not path.is_file():
        raise HarnessError(f"study file {path} does not exist", hint="give the path to study.toml")
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise HarnessError(f"cannot read study file {path}: {e}") from e
    except tomllib.TOMLDecodeError as e:
        raise HarnessError(f"{path} is not valid TOML: {e}") from e
    try:
        file = StudyFile.model_validate(raw)
    except ValidationError as e:
        raise HarnessError(
            f"{path}: invalid study:\n  {_fields(e)}",
            hint="fix the fields named above (see harness/study.py for the format)",
        ) from None
    base = path.parent
    try:
        pins = Pins.from_toml_table(file.pins)
    except PinsError as e:
        raise HarnessError(f"{path}: {e}") from None
    compose = base / "compose.yaml"
    compose_path = compose if compose.is_file() else None
    arms = _arm_specs(path, file, compose_path)
    source = file.items if isinstance(file.items, ItemsSource) else None
    items_path = _existing(path, "items", source.path if source else str(file.items))
    items, drawn = _read_items(items_path, source)
    coupled = coupling_problems(file.coupling, file.gate, list(arms), base)
    coupled += _from_arm_problems(pins, file, list(arms))
    parity = parity_problems(file.parity, {name: spec.env for name, spec in arms.items()})
    if parity:
        raise HarnessError(
            f"{path}: invalid parity:\n  " + "\n  ".join(parity),
            hint="see docs/studies.md (engine parity) for [parity]",
        )
    mismatch = _subject_pin_problem(pins, file)
    if mismatch is not None:
        raise HarnessError(f"{path}: {mismatch}", hint="name one model in both fields")
    if coupled:
        raise HarnessError(
            f"{path}: invalid coupling:\n  " + "\n  ".join(coupled),
            hint="see docs/coupled.md for [coupling] and [[gate.pairs]]",
        )
    return Study(
        path=path,
        file=file,
        arms=arms,
        items=items,
        drawn=drawn,
        pins=pins,
        compose_path=compose_path,
        prices_path=_existing(path, "prices", file.prices) if file.prices else None,
        stubs_path=_existing(path, "stubs", file.stubs) if file.stubs else None,
        ca_bundle_path=_existing(path, "ca_bundle", file.ca_bundle) if file.ca_bundle else None,
        ledger_path=base / ("ledger.jsonl" if is_url(file.ledger) else file.ledger),
        ledger_url=_ledger_url(path, file.ledger),
        study_sha256=sha256(path),
        compose_sha256=sha256(compose_path) if compose_path else None,
        items_sha256=sha256(items_path),
    )


def _from_arm_problems(pins: Pins, file: StudyFile, arms: list[str]) -> list[str]:
    """`[pins] from_arm` names an arm that runs first in every turn, so its request is there
    when the others ask (proxy/flow/arm_pins.py)."""
    arm = pins.from_arm
    if arm is None:
        return []
    if arm not in arms:
        return [f"pins.from_arm {arm!r} is not an arm of the study ({', '.join(arms)})"]
    order = file.coupling.order if file.coupling else []
    if not order or order[0] != arm:
        return [f'pins.from_arm {arm!r} must run first: set [coupling] order = ["{arm}", ...]']
    return []


def _subject_pin_problem(pins: Pins, file: StudyFile) -> str | None:
    """`subject` names the model under study, `[pins.models] main` the one every main reply
    must come from (issue 36 item 4): a study naming two models would report one subject while
    its turns are checked against the other."""
    main = pins.pinned_model("main")
    if file.subject is None or main is None:
        return None
    model = file.subject.partition("/")[2]
    if main.rsplit("/", 1)[-1] == model or served_matches(model, main):
        return None
    return (
        f"subject {file.subject!r} and [pins.models] main {main!r} name different models: the "
        "main pin is the subject"
    )


def _ledger_url(study: Path, ledger: str) -> str | None:
    """The PostgreSQL ledger: $HARNESS_LEDGER_URL (set on every shard of a cluster run, so the
    study file and its hash stay the same), else the study's `ledger` if it is a URL."""
    url = os.environ.get("HARNESS_LEDGER_URL") or (ledger if is_url(ledger) else None)
    if url is None:
        return None
    try:
        if not is_postgres_url(url):
            raise LedgerError(f"{where(url)} is not a postgresql:// URL")
        refuse_password(url)
    except LedgerError as e:
        raise HarnessError(f"{study}: field 'ledger': {e}") from None
    return url


def _existing(study: Path, field: str, value: str) -> Path:
    target = study.parent / value
    if not target.is_file():
        raise HarnessError(
            f"{study}: field {field!r}: file {target} does not exist or is not readable",
            hint=f"create it or point {field} at an existing file (paths are relative to the "
            "study file)",
        )
    return target


def _arm_specs(study: Path, file: StudyFile, compose: Path | None) -> dict[str, ArmSpec]:
    if isinstance(file.arms, dict):
        return dict(file.arms)
    if compose is None:
        raise HarnessError(
            f"{study}: field 'arms' names services ({', '.join(file.arms)}) but there is no "
            f"compose.yaml next to the study",
            hint="add compose.yaml with those services, or describe each arm in an "
            '[arms.NAME] table with command = "..." and env = {...}',
        )
    services = _compose_services(compose)
    specs: dict[str, ArmSpec] = {}
    for name in file.arms:
        if name not in services:
            raise HarnessError(
                f"{study}: field 'arms': {name!r} is not a service in {compose} "
                f"(services: {', '.join(sorted(services)) or 'none'})",
                hint="fix the arm's name or add the service to compose.yaml",
            )
        service = services[name] or {}
        if not service.get("command"):
            raise HarnessError(
                f"{compose}: service {name!r} has no command",
                hint="the local backend runs the service's command as a process: add "
                'command: "python -m arms.NAME"',
            )
        try:
            specs[name] = ArmSpec.model_validate(
                {
                    "command": service["command"],
                    "env": service.get("environment") or {},
                    "cap_add": service.get("cap_add") or [],
                }
            )
        except ValidationError as e:
            raise HarnessError(
                f"{compose}: service {name!r}:\n  {_fields(e)}", hint="fix command/environment"
            ) from None
    return specs


def _compose_services(compose: Path) -> dict[str, Any]:
    # ruamel.yaml comes with mitmproxy; compose files are plain YAML mappings.
    from ruamel.yaml import YAML, YAMLError

    try:
        data = YAML(typ="safe").load(compose.read_text(encoding="utf-8"))
    except (OSError, YAMLError) as e:
        raise HarnessError(f"cannot read {compose}: {e}") from None
    services = data.get("services") if isinstance(data, dict) else None
    if not isinstance(services, dict):
        raise HarnessError(f"{compose} has no 'services' mapping", hint="see compose.yaml docs")
    return services


def _read_items(path: Path, source: ItemsSource | None) -> tuple[list[Item], Drawn | None]:
    """The study's items: scripted (jsonl) or a memory benchmark's drawn questions."""
    if source is None:
        return load_items(path), None
    if source.format == "jsonl":
        items = load_items(path)
        if not source.draws:
            return items, None
        if any(item.memory is None for item in items):
            raise HarnessError(
                f"{path}: n, stratify and per_conversation_max draw memory items; this file has "
                "items without a memory field",
                hint="remove the draw fields from [items], or give every item its memory",
            )
        drawn = draw_from([item.memory for item in items if item.memory], source)
        keep = {id(m) for m in drawn.memories}
        return [item for item in items if id(item.memory) in keep], drawn
    try:
        drawn = load_drawn(path, source)
    except DatasetError as e:
        raise HarnessError(
            f"not {source.format}: {e}",
            hint=f"point [items] path at a {source.format} file, or fix format",
        ) from None
    return [memory_item(m) for m in drawn.memories], drawn


def memory_item(memory: Memory) -> Item:
    """A memory benchmark's question as an item: one turn asking it at its date."""
    safe = "".join(
        c if (c.isascii() and c.isalnum()) or c in "._:-" else "_"
        for c in memory.question.question_id
    )
    return Item(
        id=safe,
        clock=memory.question.question_date,
        turns=[TurnScript(user=memory.question.question)],
        memory=memory,
    )


def load_items(path: Path) -> list[Item]:
    try:
        lines = read_lines(path)
    except (OSError, UnicodeDecodeError) as e:
        raise HarnessError(
            f"cannot read items file {path}: {e}", hint="check the 'items' path and permissions"
        ) from e
    items: list[Item] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = Item.model_validate(json.loads(line))
        except json.JSONDecodeError as e:
            raise HarnessError(
                f"{path}:{number}: not JSON: {e.msg}", hint="one JSON object a line"
            ) from None
        except ValidationError as e:
            raise HarnessError(
                f"{path}:{number}: invalid item:\n  {_fields(e)}",
                hint='each line: {"id": "...", "clock": "2024-05-01T10:00:00", '
                '"turns": [{"user": "..."}]}',
            ) from None
        if item.id in seen:
            raise HarnessError(f"{path}:{number}: item id {item.id!r} appears twice")
        seen.add(item.id)
        items.append(item)
    if not items:
        raise HarnessError(f"items file {path} has no items", hint="add one JSON object a line")
    return items
