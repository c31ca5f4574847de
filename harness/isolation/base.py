"""The isolation backend contract: start the proxy and the arms, pin their clocks, stop them.

`local` (subprocesses + socket guard) and `docker` (containers on internal networks) implement the
same base, so the orchestrator never knows which one it drives.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Literal

from harness.isolation.owner import OwnedRuns
from harness.study import ArmSpec

# What the run's proxy needs, whatever runs it, and the line it prints once it listens: the
# proxy's own model (proxy.json holds it), which imports no mitmproxy into the orchestrator.
from rundir.control import PROXY_READY, ProxySettings
from rundir.runs import AppliedLimits, ResourceLimits

__all__ = ["PROXY_READY", "ProxySettings"]

ClockPinning = Literal["libfaketime", "seam-only"]
# `--isolation`: a backend by name, or `auto` (harness/isolation/choose.py picks one).
Isolation = Literal["auto", "docker", "local"]
# Environment variables holding the study's vendor keys: the proxy alone gets them, live only.
SECRET_SUFFIXES = ("_API_KEY", "_AUTH_TOKEN")


class InfraError(RuntimeError):
    """The machinery failed (a process died, a port refused), not the arm's answer."""


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
    #: Written into run.json (`clock_pin`): how, in a sentence (harness/isolation/clock.py).
    clock_pin: str = ""
    #: Every arm's bounds (the study's `[limits]`; make_backend sets them before any arm starts).
    limits: ResourceLimits = ResourceLimits()
    #: Per arm, refused packets the firewall counted beyond what egress.jsonl names (evidence
    #: the kernel log lost); filled at stop by a backend that can tell.
    egress_dropped: dict[str, int] = {}  # noqa: RUF012 - replaced, never mutated
    #: Written into run.json: whether an OS rule confines the proxy's own connections
    #: (proxy_rules.py), and if not, why.
    proxy_rule: str = "not enforced: this backend puts no OS rule on the proxy's own traffic"
    #: The proxy's refused connections, "<destination> (<kind>)" -> attempts (proxy_egress.jsonl);
    #: filled at stop by a backend that enforces the rule. Any entry fails the run.
    proxy_refused: dict[str, int] = {}  # noqa: RUF012 - replaced, never mutated

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
        seam-only: the clock then reaches the arm on the seam only). Writes a small file and
        returns: it does not wait (harness/isolation/clock.py), so it runs on the event loop."""

    @abstractmethod
    async def stop(self) -> None:
        """Stop every arm, then the proxy (which flushes its call log and settles live calls)."""

    def image_digests(self) -> dict[str, str]:
        """Image id per service, for the run manifest and the gate record (the docker backend
        overrides this; local processes run no image)."""
        return {}

    def limit_hits(self, name: str) -> list[str]:
        """The bounds (rundir.runs.limits.LIMIT_NAMES) arm `name` met since the last call, each
        crossing once, from what the host sees (never from the arm); [] where nothing is seen."""
        return []

    def applied_limits(self) -> dict[str, AppliedLimits]:
        """Per arm started: the bounds in force as the backend reads them back (run.json)."""
        return {}

    @classmethod
    def cleanup(
        cls, run_root: Path, *, force: bool = False, runs: OwnedRuns | None = None
    ) -> list[str]:
        """`harness cleanup`: stop and remove what crashed runs of this backend left, of the
        runs under `run_root` only (`runs`, owner.owned_runs, read before any backend removes
        their pids.json), a run whose harness still runs kept unless `force`;
        returns one line per thing done. Each leftover stops before the rules confining it go.
        A backend that starts nothing of its own (a view of another, as a worker's) leaves
        nothing: the local and docker backends override this."""
        return []

    @abstractmethod
    def egress_attempts(self) -> list[dict[str, object]]:
        """Every refused connection attempt so far ({arm, destination, time})."""
