"""A study's arms: how each one starts (argv, environment, the capabilities its container gets
back), from the study's `[arms.NAME]` tables or from the services of compose.yaml beside it."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from harness.errors import HarnessError
from harness.study.invalid import field_errors

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


def capability_names(value: list[str]) -> list[str]:
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
        return capability_names(value)

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


def arm_specs(
    study: Path, arms: list[str] | dict[str, ArmSpec], compose: Path | None
) -> dict[str, ArmSpec]:
    """Each arm's command and environment: the study's own tables, else compose.yaml's services."""
    if isinstance(arms, dict):
        return dict(arms)
    if compose is None:
        raise HarnessError(
            f"{study}: field 'arms' names services ({', '.join(arms)}) but there is no "
            f"compose.yaml next to the study",
            hint="add compose.yaml with those services, or describe each arm in an "
            '[arms.NAME] table with command = "..." and env = {...}',
        )
    services = _compose_services(compose)
    specs: dict[str, ArmSpec] = {}
    for name in arms:
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
                f"{compose}: service {name!r}:\n  {field_errors(e)}", hint="fix command/environment"
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
