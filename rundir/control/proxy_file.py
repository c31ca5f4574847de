"""Every setting of the run's proxy, as one model: the addon's options and `proxy.json`.

`ProxySettings` field `x` is the addon option `harness_x` (proxy/app/options.py declares the
addon's options from the model, so the two cannot drift); `ProxyFile` is what a backend writes to
`<run>/proxy.json` for `python -m proxy`: the settings, plus each arm's listeners, the control
port and the TLS files, which are options of the other addons and of mitmproxy itself.

A run-directory format: the orchestrator (harness/) builds and writes these models and the proxy
reads them, so neither imports the other for it. It imports neither mitmproxy nor the proxy.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from rundir.atomic import write_atomic
from rundir.errors import RunDirError
from rundir.model import RunDirModel

PROXY_FILE_SCHEMA = 1
# The line `python -m proxy` prints once it listens; the backends wait for it.
PROXY_READY = "harness proxy ready"
MODES = ("record", "live", "replay")
# Settings only live mode reads: left out of the options otherwise, so a record run's options
# never name a ledger or a cap it does not use.
# `--workers N`: worker k > 0 runs arm A as instance `A@k` (its own listeners and process); an
# arm name cannot hold "@" (harness/study/), so the arm a call is charged to is unambiguous.
WORKER_MARK = "@"


def instance_name(arm: str, worker: int) -> str:
    """The name worker `worker`'s copy of `arm` has at the backend and the proxy."""
    return arm if worker == 0 else f"{arm}{WORKER_MARK}{worker}"


def arm_of(instance: str) -> str:
    """The arm an instance name belongs to: what every record names, whatever N is."""
    return instance.split(WORKER_MARK, 1)[0]


LIVE_ONLY = ("cap", "prices", "ledger", "ledger_url", "stage", "stage_cap")


class ProxySettingsError(ValueError):
    """proxy.json cannot be read as this version's ProxyFile (the message is one line)."""


class PurposeRule(BaseModel):
    """A study's `[purposes.NAME]` rule: a call without an X-Harness-Purpose header whose route
    and model match gets purpose NAME. `model` is a shell-style pattern (`gpt-4.1-nano*`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    purpose: str = Field(pattern=r"^[A-Za-z0-9._:-]{1,64}$")
    route: str | None = None
    model: str | None = None

    def matches(self, route: str, model: str | None) -> bool:
        if self.route is not None and self.route != route:
            return False
        return self.model is None or (model is not None and fnmatchcase(model, self.model))


def rule_purpose(rules: Sequence[PurposeRule], route: str, model: str | None) -> str | None:
    """The purpose of the first rule that matches, in the study's order."""
    return next((rule.purpose for rule in rules if rule.matches(route, model)), None)


# Seconds between fsyncs of calls.jsonl and bodies/ (group commit, rundir/calls/calllog.py): live
# and replay every 0.1 s; record once a second (the fsyncs were 15.5% of a record proxy's CPU on a
# LongMemEval-sized run, issue 37).
LIVE_SYNC_INTERVAL_S = 0.1
RECORD_SYNC_INTERVAL_S = 1.0


class ProxySettings(BaseModel):
    """What the run's proxy does. Paths are made absolute where the model is built (the docker
    backend mounts each at the same path, so the proxy reads them as written)."""

    model_config = ConfigDict(extra="forbid")

    mode: Literal["record", "live", "replay"] = Field("record", description="record|live|replay")
    run_dir: Path | None = Field(None, description="Run directory for calls.jsonl and bodies/.")
    run_id: str = Field("", description="Run id written in every call record.")
    stubs: Path | None = Field(None, description="Stubs TOML layered on the defaults (record).")
    arm: str = Field("default", description="Arm charged for calls on any listener.")
    body_limit: int = Field(32 * 1024 * 1024, description="Largest request body (bytes).")
    masks: list[str] = Field(default_factory=list, description="Extra masked body paths.")
    sync_interval: float = Field(
        LIVE_SYNC_INTERVAL_S,
        description="Seconds between fsyncs of the call log (record mode's default: 1).",
    )
    purposes: list[PurposeRule] = Field(
        default_factory=list, description="Purpose rules by route and model (JSON each)."
    )
    upstreams: list[str] = Field(default_factory=list, description="VENDOR=URL base URLs.")
    reuse: list[str] = Field(
        default_factory=list,
        description="Reuse pairs LEADER=FOLLOWER: a follower's main request equal (masked) to "
        "its leader's of the same item and turn is answered with the leader's reply.",
    )
    cap: str = Field("", description="Live: the run's cap in USD.")
    prices: Path | None = Field(None, description="Live: price table TOML (default: packaged).")
    ledger: Path | None = Field(None, description="Live: the spend ledger file.")
    # A postgresql:// ledger, in place of the file (one stage cap across machines). Written to
    # proxy.json, so it never carries a password (PGPASSWORD or ~/.pgpass hold that).
    ledger_url: str = Field("", description="Live: a postgresql:// ledger instead of the file.")
    stage: str = Field("default", description="Live: the ledger stage the run belongs to.")
    stage_cap: str = Field("", description="Live: the stage's cap in USD, if it is new.")
    deadline: float = Field(60.0, description="Live: upstream deadline per call, seconds.")
    pins: Path | None = Field(None, description="Live: TOML file with a [pins] table.")
    replay_from: Path | None = Field(None, description="Replay: the run whose calls are served.")
    replay_timing: bool = Field(False, description="Replay: wait the recorded reply timings.")
    # The backend picks it, as it picks the listeners, so the OS rule on the proxy's own traffic
    # (harness/isolation/local/proxy_rule.py) can let the proxy reach exactly this loopback port.
    stream_port: int = Field(
        0, ge=0, le=65535, description="127.0.0.1 port of the stub stream server (0: any free)."
    )
    # Not addon options: the backend turns them into listeners and TLS settings (ProxyFile).
    arms: list[str] = Field(default_factory=list, exclude=True)
    ca_bundle: Path | None = Field(None, exclude=True)

    @model_validator(mode="after")
    def _record_syncs_less(self) -> ProxySettings:
        # Record mode spends nothing: its call log is fsynced once a second unless told
        # otherwise (rundir/calls/calllog.py says what a crash loses).
        if self.mode == "record" and "sync_interval" not in self.model_fields_set:
            self.sync_interval = RECORD_SYNC_INTERVAL_S
        return self

    @field_validator("run_dir", "stubs", "prices", "ledger", "pins", "replay_from", "ca_bundle")
    @classmethod
    def _absolute(cls, path: Path | None) -> Path | None:
        return path.resolve() if path else None

    def addon_options(self) -> dict[str, Any]:
        """The `harness_*` options of proxy/app/addon.py for these settings."""
        options: dict[str, Any] = {}
        for name, field in ProxySettings.model_fields.items():
            if field.exclude or (name in LIVE_ONLY and self.mode != "live"):
                continue
            if name == "replay_from" and self.mode != "replay":
                continue
            options[f"harness_{name}"] = option_value(getattr(self, name))
        return options

    def upstream_ca(self) -> str:
        """The CA bundle the proxy trusts for the vendors' TLS, live mode only ('' = none)."""
        return str(self.ca_bundle) if self.ca_bundle and self.mode == "live" else ""


def option_value(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, list):
        return [v.model_dump_json() if isinstance(v, BaseModel) else v for v in value]
    return value


class ControlRelay(BaseModel):
    """docker: an address only the host reaches, relayed to the control port
    (proxy/app/relay.py)."""

    model_config = ConfigDict(extra="forbid")

    host: str
    port: int


class ProxyFile(RunDirModel):
    """`proxy.json`: everything `python -m proxy` needs, written by the isolation backend.
    A file of another schema is upgraded (RunDirModel.upgrades) or refused, never misread."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_: Literal[1] = Field(1, alias="schema")  # PROXY_FILE_SCHEMA
    settings: ProxySettings
    # Per arm: its reverse listener, and a forward-proxy (HTTPS_PROXY) one; both attribute by port.
    arm_ports: dict[str, int]
    https_proxy_ports: dict[str, int] = Field(default_factory=dict)
    # docker: each arm's listeners bind to the proxy's address on that arm's network only.
    arm_hosts: dict[str, str] = Field(default_factory=dict)
    control_port: int
    control_relay: ControlRelay | None = None
    confdir: str = ""  # the harness CA (harness/isolation/proxy_ca.py), as the proxy sees it
    vendor_cert: str = ""  # the vendor-host certificate the CA signed, served for every host
    ca_bundle: str = ""  # live: also trusted for the vendors' TLS
    egress_log: str = ""  # where proxy/app/forward_guard.py appends refused destinations
    dns: dict[str, Any] | None = None  # read by harness/isolation/dns_refuser.py only
    log_level: str = "warning"

    def listeners(self) -> list[tuple[str, int]]:
        return [*self.arm_ports.items(), *self.https_proxy_ports.items()]

    def options(self) -> dict[str, Any]:
        """Every option this file sets: the settings' and those of the other addons and of
        mitmproxy (listeners are mitmproxy `mode`s, built by proxy/__main__.py)."""
        options = self.settings.addon_options() | {
            "harness_control_port": self.control_port,
            "harness_arm_ports": [f"{port}={arm}" for arm, port in self.listeners()],
            "harness_egress_log": self.egress_log,
        }
        if self.confdir:
            options["confdir"] = self.confdir
        if self.vendor_cert:
            # Served for every intercepted host, dated so arms with a pinned clock accept it.
            options["certs"] = [f"*={self.vendor_cert}"]
        if self.ca_bundle:
            options["ssl_verify_upstream_trusted_ca"] = self.ca_bundle
        return options

    def write(self, path: Path) -> None:
        write_atomic(path, self.model_dump_json(by_alias=True, indent=2))

    @classmethod
    def read(cls, path: Path) -> ProxyFile:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            raise ProxySettingsError(f"cannot read proxy settings {path}: {e}") from None
        try:
            return cls.model_validate(data)
        except ValidationError as e:
            first = e.errors(include_url=False)[0]
            cause = (first.get("ctx") or {}).get("error")
            if isinstance(cause, RunDirError):  # a schema this proxy cannot read
                raise ProxySettingsError(f"{path}: {cause.message}; {cause.hint}") from None
            where = ".".join(str(p) for p in first["loc"]) or "file"
            raise ProxySettingsError(
                f"{path}: invalid proxy settings: {where}: {first['msg']} "
                f"({e.error_count()} error(s)); the file is written by the harness, not by hand"
            ) from None
