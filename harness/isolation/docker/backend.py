"""The docker backend: every arm in its own container on its own internal network.

Layout of one run (every name starts `harness-<run id>`, everything labelled `harness.run=<id>`
and `harness.owner=<pid>:<start>` so `harness cleanup` finds what a crashed run left):

    <prefix>-ctl      a network with the proxy alone on it: the host reaches the proxy's control
                      endpoint there (relayed to its loopback-only listener); internal except in
                      live mode, where the proxy reaches the vendors through it.
    <prefix>-<arm>    one `--internal` network per arm: the arm's container and the proxy.
    <prefix>-proxy    the proxy container: proxy_main with one listener per arm, each bound to
                      the proxy's address on that arm's network only (calls attributed by port).
    <prefix>-<arm>    the arm's container, on its own network only, SDK base URLs pointing at
                      its listener, placeholder keys, SEAM_HOST=0.0.0.0.

How the orchestrator reaches a seam no port publishes, and the rules that keep arms from
reaching anything but the proxy: run_rules.py. What an arm's container holds and mounts:
arm_container.py; the proxy's: proxy_container.py.

Refused attempts reach egress.jsonl from four sources, each line read once and appended
(egress_book.py): the socket guard inside Python arms (it refuses before a packet leaves, names
included; its lines are the writer's whatever they say), the proxy's refusals of non-vendor
hosts, the DNS refuser (the name looked up) and the kernel log, followed from the run's start
(kernel_log.py; everything else: non-Python code, raw frames), whose losses the firewall's
packet counters reveal (`egress_dropped`).

The containers run the harness sources of this checkout (bind-mounted read-only on PYTHONPATH),
as the local backend does, so a code change never needs an image rebuild to take effect; the
images provide Python, the SDKs and libfaketime.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import math
import time
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

import structlog

from harness.isolation import egress, owner, pids, proxy_rules
from harness.isolation.base import (
    PROXY_READY,
    ArmHandle,
    ClockPinning,
    InfraError,
    IsolationBackend,
    ProxyInfo,
    ProxySettings,
)
from harness.isolation.clock import PIN_METHOD, SEAM_ONLY, offset_line
from harness.isolation.docker import leftovers, net
from harness.isolation.docker import limits as docker_limits
from harness.isolation.docker.arm_container import (
    ARM_IMAGE,
    SEAM_PORT,
    ArmFolders,
    arm_env,
    wait_until_serving,
)
from harness.isolation.docker.cli import DockerError, docker
from harness.isolation.docker.clock import clock_pinning_for
from harness.isolation.docker.config import compose_images, read_text, write_atomic
from harness.isolation.docker.mounts import source_mounts
from harness.isolation.docker.names import check_names, docker_name, host_name
from harness.isolation.docker.proxy_container import (
    PROXY_IMAGE,
    RELAY_PORT,
    listener_ports,
    proxy_file,
    proxy_run_args,
    proxy_script,
)
from harness.isolation.docker.run_rules import RunRules
from harness.isolation.docker.security import hardening
from harness.isolation.egress_book import EgressBook
from harness.isolation.proxy_ca import install_ca_cert
from harness.study import ArmSpec
from rundir.runs import AppliedLimits

log = structlog.get_logger("harness.isolation.docker")
STARTUP_TIMEOUT_S = 60.0


class DockerBackend(IsolationBackend):
    isolation = "docker"
    clock_pinning: ClockPinning = "libfaketime"

    def __init__(
        self,
        run_dir: Path,
        work_dir: Path | None = None,
        compose: Path | None = None,
        arms: Iterable[str] = (),
    ) -> None:
        self.run_dir = run_dir.resolve()
        # The study's folder: mounted read-only into arms as their working directory, so an arm
        # that lives next to its study runs as it does locally.
        self.work_dir = (work_dir or Path.cwd()).resolve()
        self.images = compose_images(compose)
        # What run.json records: an arm image without libfaketime gets an empty LD_PRELOAD.
        self.clock_pinning = clock_pinning_for(self.images.get(arm, ARM_IMAGE) for arm in arms)
        self.clock_pin = PIN_METHOD if self.clock_pinning == "libfaketime" else SEAM_ONLY
        (self.run_dir / "logs").mkdir(parents=True, exist_ok=True)
        self.egress_log = self.run_dir / "egress.jsonl"
        self.book = EgressBook(self.egress_log)
        self.rules = RunRules(self.run_dir)  # the kernel log, the proxy's and arms' rules
        self.run_id = ""
        self.prefix = ""
        self.labels: list[str] = []
        self.arm_ips: dict[str, str] = {}  # the proxy's address on each arm's network
        self.arm_ports: dict[str, int] = {}
        self.https_ports: dict[str, int] = {}
        self.specs: dict[str, ArmSpec] = {}
        self.started: list[str] = []  # containers, to remove on stop
        self.networks: list[str] = []
        self.proxy_info: ProxyInfo | None = None
        # (real time written, offset) per arm: the guard inside an arm stamps its entries with the
        # arm's pinned clock, which these turn back into real time.
        self.clock_history: dict[str, list[tuple[float, int]]] = {}
        # Each arm's bounded disk (logs, egress, /tmp), what the engine holds for it, and what
        # it met (docker_limits: cgroup counters, OOMKilled, a full disk); made at its start,
        # once make_backend has set the study's limits.
        self.bounds: docker_limits.ArmBounds | None = None

    @classmethod
    def cleanup(
        cls, run_root: Path, *, force: bool = False, runs: owner.OwnedRuns | None = None
    ) -> list[str]:
        runs = owner.owned_runs(run_root) if runs is None else runs
        return leftovers.cleanup(run_root, runs, force=force)

    # --- proxy -----------------------------------------------------------------------------

    async def start_proxy(self, settings: ProxySettings) -> ProxyInfo:
        self.run_id = settings.run_id
        self.prefix = f"harness-{settings.run_id}"
        self.rules.run_id = settings.run_id
        self.labels = [
            "--label", f"{owner.RUN_LABEL}={self.run_id}",
            "--label", f"{owner.OWNER_LABEL}={owner.owner()}",
        ]  # fmt: skip
        # Names this harness as the run's owner, so `harness cleanup --force` of this run's
        # root may stop it, and no other root's cleanup ever does (owner.OwnedRuns).
        pids.PidFile(self.run_dir).write()
        try:
            return await asyncio.to_thread(self._start_proxy, settings)
        except DockerError as e:
            raise InfraError(f"docker: {e}") from e

    def postgres_ledger_problem(self, ledger_url: str) -> str | None:
        """Why this backend's proxy could not book at a postgresql:// ledger, or None: its
        container must reach the host it names (proxy_rules.docker_ledger_targets) and its
        image must carry psycopg (the `postgres` extra; the default images do not)."""
        try:
            proxy_rules.docker_ledger_targets(ledger_url)
        except proxy_rules.LedgerUnreachableError as e:
            return str(e)
        image = self.images.get("proxy", PROXY_IMAGE)
        probe = ["run", "--rm", "--network", "none", "--entrypoint", "python", image]
        try:
            docker([*probe, "-c", "import psycopg"], timeout=60)
        except DockerError:
            return (
                f"the proxy image {image} has no psycopg (the `postgres` extra), which the "
                "proxy books at a PostgreSQL ledger with"
            )
        return None

    def _start_proxy(self, settings: ProxySettings) -> ProxyInfo:
        # --workers N: worker k's copy of arm A is `A@k`, named `A-w<k>` in docker
        # (names.py); names that would collide, with each other or the proxy's, refused.
        check_names(settings.arms)
        # Only live mode forwards to the vendors; otherwise the proxy has no way out either.
        ctl = self._network("ctl", internal=settings.mode != "live")
        for arm in settings.arms:
            self._network(docker_name(arm), internal=True)
        proxy = f"{self.prefix}-proxy"
        config_path = self.run_dir / "proxy.json"
        log_path = self.run_dir / "logs" / "proxy.log"
        install_ca_cert(self.run_dir)  # also makes the CA on first use
        pinned = self._confine_proxy(ctl, settings)
        image = self.images.get("proxy", PROXY_IMAGE)
        script = proxy_script(config_path, log_path)
        args = proxy_run_args(proxy, ctl, self.labels, settings, pinned)
        docker([*args, "--entrypoint", "sh", image, "-c", script])
        self.started.append(proxy)
        for arm in settings.arms:
            docker(["network", "connect", self.arm_container(arm), proxy])
        addresses = net.container_addresses(proxy)
        self.arm_ips = {arm: addresses[self.arm_container(arm)] for arm in settings.arms}
        self.arm_ports, self.https_ports = listener_ports(settings.arms)
        for index, arm in enumerate(settings.arms):
            tcp_ports = (self.arm_ports[arm], self.https_ports[arm])
            network = self.arm_container(arm)
            self.rules.confine_arm(arm, index, network, self.arm_ips[arm], tcp_ports)
        control_ip = addresses[ctl]
        ports = (self.arm_ports, self.https_ports)
        config = proxy_file(settings, self.run_dir, self.arm_ips, ports, control_ip)
        config.write(config_path)  # atomic: the container waits for the file to appear
        self._wait(proxy, lambda: PROXY_READY in read_text(log_path), "the proxy", log_path)
        self.proxy_info = ProxyInfo.listening(
            self.arm_ips, self.arm_ports, self.https_ports, f"http://{control_ip}:{RELAY_PORT}"
        )
        return self.proxy_info

    def _confine_proxy(self, ctl: str, settings: ProxySettings) -> list[str]:
        """The proxy's own traffic confined (run_rules.py), checked by a probe from its
        network; returns the `--add-host` flags that pin the vendor hosts for the proxy."""
        image = self.images.get("proxy", PROXY_IMAGE)
        probe_run = ["docker", "run", "--rm", "--network", ctl, *self.labels, *hardening([])]
        probe_run += ["--entrypoint", "python", image]
        self.proxy_rule, pinned = self.rules.confine_proxy(ctl, settings, probe_run)
        return pinned

    # --- arms ------------------------------------------------------------------------------

    async def start_arm(self, name: str, spec: ArmSpec, proxy: ProxyInfo) -> ArmHandle:
        self.specs[name] = spec
        log_path = self._arm_log(name)
        offset = log_path.stat().st_size if log_path.exists() else 0  # restarts append
        try:
            url = await asyncio.to_thread(self._start_arm, name, spec)
        except DockerError as e:
            raise InfraError(f"docker: arm {name!r}: {e}") from e
        alive = functools.partial(self.arm_alive, name)
        await wait_until_serving(name, url, log_path, offset, alive, STARTUP_TIMEOUT_S)
        return ArmHandle(name=name, seam_url=url)

    def _start_arm(self, name: str, spec: ArmSpec) -> str:
        container = self.arm_container(name)
        docker(["rm", "-f", container], check=False)  # a restart replaces the dead one
        if self.bounds is None:
            self.bounds = docker_limits.ArmBounds(self.run_dir, self.limits)
        disk = self.bounds.disk(name)
        image = self.images.get(host_name(name), ARM_IMAGE)  # a worker's copy: its arm's image
        clock_dir, guard_log = self._arm_dir("clock", name), egress.guard_log(self.run_dir, name)
        if not (clock_dir / "faketime").exists():
            write_atomic(clock_dir / "faketime", "+0\n")
        # Its only resolver is the DNS refuser on the proxy (not Docker's 127.0.0.11, which
        # fails outside names without a trace): every name it looks up is logged.
        resolv = self.run_dir / "resolv" / f"{name}.conf"
        write_atomic(resolv, f"nameserver {self.arm_ips[name]}\noptions attempts:1 timeout:2\n")
        proxy_ip, ports = self.arm_ips[name], (self.arm_ports[name], self.https_ports[name])
        env = arm_env(name, spec, image, self.run_id, proxy_ip, ports)
        log_path = self._arm_log(name)
        folders = ArmFolders(
            tmp=disk.tmp,
            clock=clock_dir,
            resolv=resolv,
            ca=self.run_dir / "ca",
            egress=guard_log.parent,
            logs=log_path.parent,
            work=self.work_dir,
        )
        # sh appends the arm's output to its own log folder (no other arm mounts it), as the
        # local backend's arms do; its guard log is in a folder of its own too.
        script = f'exec "$@" >>/harness/logs/{log_path.name} 2>&1'
        docker([
            "run", "-d", "--name", container, "--network", self.arm_container(name),
            "--hostname", host_name(name), *self.labels, *hardening(spec.cap_add), *source_mounts(),
            *docker_limits.run_flags(self.limits), *folders.mounts(),
            *[a for k, v in env.items() for a in ("-e", f"{k}={v}")],
            "--entrypoint", "sh", image, "-c", script, "sh", *spec.command,
        ])  # fmt: skip
        if container not in self.started:
            self.started.append(container)
        self.bounds.started(name, container)
        ip = net.container_addresses(container)[self.arm_container(name)]
        return f"http://{ip}:{SEAM_PORT}"

    def arm_alive(self, name: str) -> bool:
        out = docker(["inspect", "-f", "{{.State.Running}}", self.arm_container(name)], check=False)
        return out.strip() == "true"

    def limit_hits(self, name: str) -> list[str]:
        return self.bounds.hits(name, self.arm_container(name)) if self.bounds else []

    def applied_limits(self) -> dict[str, AppliedLimits]:
        return dict(self.bounds.held) if self.bounds else {}

    async def restart_arm(self, name: str) -> ArmHandle:
        if self.proxy_info is None:
            raise InfraError("the proxy is not running")
        return await self.start_arm(name, self.specs[name], self.proxy_info)

    def pin_clock(self, name: str, clock: datetime) -> None:
        # A relative offset as the local backend writes (harness/isolation/clock.py): the arm
        # sees the item's date, then time passing normally. Atomic replace in a bind-mounted
        # folder (not a mounted file, whose inode a rename would detach from the container).
        # libfaketime re-reads the file on every clock call: the pin holds once written.
        now = time.time()
        offset, line = offset_line(clock, now)
        # Whole seconds rounded up, as egress.real_time reads them (it allows a second's slack).
        self.clock_history.setdefault(name, []).append((now, math.ceil(offset)))
        # Read live only (a crash ends the arm too): atomic, without fsyncs.
        write_atomic(self._arm_dir("clock", name) / "faketime", line, durable=False)

    def image_digests(self) -> dict[str, str]:
        """Image id per service (proxy and each arm), for the run manifest."""
        services = {"proxy": self.images.get("proxy", PROXY_IMAGE)}
        services |= {host_name(a): self.images.get(host_name(a), ARM_IMAGE) for a in self.arm_ports}
        found: dict[str, str] = {}
        for service, image in services.items():
            with contextlib.suppress(DockerError):
                found[service] = docker(["image", "inspect", "-f", "{{.Id}}", image]).strip()
        return found

    # --- stopping and egress ---------------------------------------------------------------

    async def stop(self) -> None:
        await asyncio.to_thread(self._stop)

    def _stop(self) -> None:
        arms = [c for c in self.started if not c.endswith("-proxy")]
        if arms:
            docker(["stop", "-t", "5", *arms], timeout=60, check=False)
        proxy = f"{self.prefix}-proxy"
        if proxy in self.started:
            # SIGINT: mitmproxy shuts down, and the addon flushes the call log, settles calls.
            docker(["kill", "--signal", "INT", proxy], check=False)
            docker(["wait", proxy], timeout=30, check=False)
        if self.started:
            docker(["rm", "-f", *self.started], timeout=60, check=False)
        self.started.clear()
        # The kernel log outlives the rules: read what they caught before forgetting them, and
        # their counters, which say what the log lost.
        self.rules.kernel.drain()
        entries = self.egress_attempts()
        if self.run_id:  # proxy_egress.jsonl, checked against the rules' counters
            self.proxy_refused = self.rules.proxy_refused()
        if self.bounds is not None:  # the arms' files, copied out as plain files
            for failure in self.bounds.release():
                log.warning("an arm's disk was not released", error=failure)
            for arm in self.bounds.disks:  # each guard log is now a copy of what was read
                self.book.moved(egress.guard_log(self.run_dir, arm))
        if self.run_id:
            self.egress_dropped = self.rules.dropped(entries)
        self.rules.remove()
        for network in reversed(self.networks):
            docker(["network", "rm", network], check=False)
        self.networks.clear()
        pids.PidFile(self.run_dir).remove()

    def egress_attempts(self) -> list[dict[str, object]]:
        """Guard entries (each attributed to the arm whose folder holds it), the proxy's and
        the kernel log's (attributed by listener and by bridge): every one so far, the new ones
        appended to egress.jsonl."""
        # A copy: this runs in a thread (the stray watch) while a worker may be adding an arm.
        arms = list(self.rules.log_prefixes.values())
        guards = egress.guard_entries(self.run_dir, arms, self.book)
        entries = [egress.real_time(entry, self.clock_history) for entry in guards]
        entries += egress.proxy_entries(self.run_dir, self.book)
        entries += self.rules.entries(self.book)
        self.book.add(entries)
        return list(self.book.entries)

    # --- helpers ---------------------------------------------------------------------------

    def arm_container(self, instance: str) -> str:
        """The container and network name of an arm (or a worker's copy of it)."""
        return f"{self.prefix}-{docker_name(instance)}"

    def _network(self, suffix: str, internal: bool) -> str:
        name = f"{self.prefix}-{suffix}"
        docker(["network", "create", *(["--internal"] if internal else []), *self.labels, name])
        self.networks.append(name)
        return name

    def _arm_dir(self, kind: str, arm: str) -> Path:
        path = self.run_dir / kind / arm
        path.mkdir(parents=True, exist_ok=True)
        return path

    def _arm_log(self, arm: str) -> Path:
        folder = self.run_dir / "logs" / arm
        folder.mkdir(parents=True, exist_ok=True)
        return folder / "arm.log"

    def _wait(self, container: str, ready: Any, what: str, log_path: Path) -> None:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while not ready():
            running = docker(["inspect", "-f", "{{.State.Running}}", container], check=False)
            if running.strip() != "true" or time.monotonic() > deadline:
                tail = read_text(log_path)[-2000:]
                raise InfraError(f"{what} was not ready ({container}); {log_path}:\n{tail}")
            time.sleep(0.1)
