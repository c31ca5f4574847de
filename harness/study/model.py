"""The study file (`study.toml`) as pydantic models: what to run, on which arms, under which rules,
and the `Study` a loaded file becomes (harness/study/load.py).

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
    [parity]                              # engine parity across memory arms (parity.py here)
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

The models check each field alone; what needs several fields or other files (arms against
compose.yaml, coupling, parity, the subject against the main pin) is checked when the study
loads (harness/study/load.py).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from harness.datasets import Drawn, ItemsSource
from harness.guard import GuardSpec
from harness.study.arms import ArmSpec, capability_names
from harness.study.coupling import Coupling, GateSection
from harness.study.items import Item
from harness.study.parity import Parity
from ledger.usd import BadAmount, parse_usd
from rundir.control import PurposeRule as ProxyPurposeRule
from rundir.instances import WORKER_MARK
from rundir.runs import ResourceLimits
from vendors.hosts import VENDORS
from vendors.pins import Pins

STUDY_SCHEMA = 1
DEFAULT_DEADLINE_MS = 60_000
DEFAULT_INGEST_DEADLINE_MS = 120_000
# A purpose is a key into pins and delays and a label in reports (proxy/flow/failsafe.py's shape).
_PURPOSE_NAME = re.compile(r"[A-Za-z0-9._:-]{1,64}")


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
    # Engine parity across memory arms (harness/study/parity.py, the design's V9).
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
        # A worker's copy of an arm is named ARM@k in every run file (rundir/instances.py): an
        # arm whose own name held the mark would be read back as another arm's copy.
        marked = [name for name in value if WORKER_MARK in name]
        if marked:
            raise ValueError(
                f"arm name {', '.join(map(repr, marked))} holds {WORKER_MARK!r}, which marks a "
                f"worker's copy of an arm (A{WORKER_MARK}2); rename the arm"
            )
        return value

    @field_validator("cap_add")
    @classmethod
    def _caps(cls, value: list[str]) -> list[str]:
        return capability_names(value)

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
