"""The isolation backend contract: start the proxy and the arms, pin their clocks, stop them.

`local` (subprocesses + socket guard) and `docker` (containers on internal networks) implement the
same base, so the orchestrator never knows which one it drives.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from harness.study import ArmSpec

ClockPinning = Literal["libfaketime", "seam-only"]
# The line the run's proxy (proxy_main) prints once it listens. Here, not in proxy_main, so the
# backends that wait for it do not import mitmproxy into the orchestrator.
PROXY_READY = "harness proxy ready"
# Environment variables holding the study's vendor keys: the proxy alone gets them, live only.
SECRET_SUFFIXES = ("_API_KEY", "_AUTH_TOKEN")


class InfraError(RuntimeError):
    """The machinery failed (a process died, a port refused), not the arm's answer."""


@dataclass
class ProxySettings:
    """What the run's proxy needs, whatever runs it."""

    run_dir: Path
    run_id: str
    mode: Literal["record", "live", "replay"]
    arms: list[str]
    stubs: Path | None = None
    pins_file: Path | None = None  # a TOML file with a [pins] table (the study file itself)
    cap: str = ""
    prices: Path | None = None
    ledger: Path | None = None
    stage: str = "default"
    stage_cap: str = ""
    upstreams: list[str] = field(default_factory=list)
    ca_bundle: Path | None = None  # live: a CA bundle trusted for the vendors' TLS
    deadline_s: float = 60.0
    replay_from: Path | None = None  # replay: the run directory whose recorded calls are served
    masks: list[str] = field(default_factory=list)  # on top of the proxy's DEFAULT_BODY_MASKS

    def addon_options(self) -> dict[str, Any]:
        """The proxy addon's options (proxy/addon.py) for this run, whatever runs the proxy.
        Paths are absolute: the docker backend mounts each at the same path."""

        def absolute(path: Path | None) -> str:
            return str(path.resolve()) if path else ""

        options: dict[str, Any] = {
            "harness_mode": self.mode,
            "harness_run_id": self.run_id,
            "harness_run_dir": absolute(self.run_dir),
            "harness_stubs": absolute(self.stubs),
            "harness_pins": absolute(self.pins_file),
            "harness_upstreams": self.upstreams,
            "harness_deadline": self.deadline_s,
            "harness_masks": self.masks,
        }
        if self.mode == "replay":
            options["harness_replay_from"] = absolute(self.replay_from)
        if self.mode == "live":
            options |= {
                "harness_cap": self.cap,
                "harness_prices": absolute(self.prices),
                "harness_ledger": absolute(self.ledger),
                "harness_stage": self.stage,
                "harness_stage_cap": self.stage_cap,
            }
        return options

    def upstream_ca(self) -> str:
        """The CA bundle the proxy trusts for the vendors' TLS, live mode only ('' = none)."""
        return str(self.ca_bundle.resolve()) if self.ca_bundle and self.mode == "live" else ""


@dataclass
class ProxyInfo:
    """Where arms reach the proxy (per arm: its own listener) and where the harness controls it."""

    arm_bases: dict[str, str]  # arm -> http://host:port of its listener, as the arm sees it
    control_url: str
    # arm -> http://host:port of its forward-proxy listener (HTTPS_PROXY), as the arm sees it
    https_proxies: dict[str, str] = field(default_factory=dict)

    @classmethod
    def listening(
        cls,
        hosts: dict[str, str],
        arm_ports: dict[str, int],
        https_ports: dict[str, int],
        control_url: str,
    ) -> ProxyInfo:
        """Each arm's two listeners, on the address the arm reaches the proxy at."""
        return cls(
            arm_bases={a: f"http://{hosts[a]}:{p}" for a, p in arm_ports.items()},
            control_url=control_url,
            https_proxies={a: f"http://{hosts[a]}:{p}" for a, p in https_ports.items()},
        )


@dataclass
class ArmHandle:
    name: str
    seam_url: str
    pid: int | None = None


class IsolationBackend(ABC):
    #: Written into run.json: how arms were kept apart.
    isolation: str
    #: Written into run.json: why this backend (the flag, or what `--isolation auto` found).
    isolation_reason: str = ""
    #: Written into run.json: how each arm's wall clock was pinned to the item's date.
    clock_pinning: ClockPinning

    @abstractmethod
    async def start_proxy(self, settings: ProxySettings) -> ProxyInfo:
        """Start the run's proxy; returns once it accepts calls."""

    @abstractmethod
    async def start_arm(self, name: str, spec: ArmSpec, proxy: ProxyInfo) -> ArmHandle:
        """Start one arm; returns once its seam answers. Raises InfraError if it cannot."""

    @abstractmethod
    def arm_alive(self, name: str) -> bool:
        """Whether the arm's process/container still runs (a dead one is an infra failure)."""

    @abstractmethod
    async def restart_arm(self, name: str) -> ArmHandle:
        """Replace a dead or wedged arm with a fresh one (same spec, same proxy listener)."""

    @abstractmethod
    def pin_clock(self, name: str, clock: datetime) -> None:
        """Set the arm's wall clock to `clock` from now on (no-op when clock_pinning is
        seam-only: the clock then reaches the arm on the seam only)."""

    @abstractmethod
    async def stop(self) -> None:
        """Stop every arm, then the proxy (which flushes its call log and settles live calls)."""

    def image_digests(self) -> dict[str, str]:
        """Image id per service, for the run manifest and the gate record (the docker backend
        overrides this; local processes run no image)."""
        return {}

    @abstractmethod
    def egress_attempts(self) -> list[dict[str, object]]:
        """Every refused connection attempt so far ({arm, destination, time})."""
