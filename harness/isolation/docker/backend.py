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

How the orchestrator reaches a seam with no port published (internal networks cannot publish):
the host has an address on every bridge, so it connects to the arm's address directly; that is
host-originated traffic (OUTPUT), which Docker's isolation does not block, and the arm's replies
belong to a connection the host opened. The reverse direction is closed by arm_rules'
iptables and ip6tables rules, matched on the arm network's bridge interface (not its subnet:
a forged source address is still caught): every packet from an arm's bridge that is not part of
a connection the host opened, to the host (INPUT) or to anything but its proxy listeners
(DOCKER-USER), is logged to the kernel log with a prefix naming the run and arm, and refused.
So "arms reach nothing but the proxy" holds with no relay and no extra network per arm.

Every container starts with no capabilities (a study gives some back: `cap_add`), no privilege
gain and IPv6 off (security.py). Each arm mounts only its own folders: its guard log
(`egress/<arm>/`), its log (`logs/<arm>/`), its clock (read-only), and a resolv.conf naming the
DNS refuser on the proxy (dns_refuser), so no arm can write what the harness reads as another's.

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
import math
import os
import time
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

import structlog

from arms.server import parse_ready_line
from harness.isolation import egress, egress_probe, firewall, owner, pids, proxy_rules
from harness.isolation.base import (
    PROXY_READY,
    SECRET_SUFFIXES,
    ArmHandle,
    ClockPinning,
    InfraError,
    IsolationBackend,
    ProxyInfo,
    ProxySettings,
)
from harness.isolation.clock import FAKETIME_ENV, PIN_METHOD, SEAM_ONLY, offset_line
from harness.isolation.dns_refuser import DNS_PORT
from harness.isolation.docker import arm_rules, leftovers, net
from harness.isolation.docker import limits as docker_limits
from harness.isolation.docker.cli import DockerError, docker
from harness.isolation.docker.clock import clock_pinning_for, faketime_preload
from harness.isolation.docker.config import compose_images, read_text, write_atomic
from harness.isolation.docker.mounts import identity_mounts, source_mounts
from harness.isolation.docker.names import check_names, docker_name, host_name
from harness.isolation.docker.security import hardening
from harness.isolation.egress_book import EgressBook
from harness.isolation.kernel_log import KernelLog, KernelLogError, all_dropped, dropped
from harness.isolation.proxy_ca import VENDOR_CERT_FILE, ca_dir, install_ca_cert, proxy_env
from harness.isolation.sdk_env import sdk_env
from harness.isolation.seam_http import seam_client
from harness.study import ArmSpec
from rundir.control.proxy_file import ControlRelay, ProxyFile
from rundir.runs.limits import AppliedLimits

log = structlog.get_logger("harness.isolation.docker")
GUARD_DIR = Path(__file__).parents[1] / "guard"
ARM_IMAGE = "harness-arm"
PROXY_IMAGE = "harness-proxy"
SEAM_PORT = 8700
CONTROL_PORT = 8090  # proxy_main's control endpoint, on the proxy container's loopback
RELAY_PORT = 8091  # the relay to it, on the proxy's control-network address
FIRST_ARM_PORT = 8100
FIRST_HTTPS_PROXY_PORT = 8200  # each arm's forward-proxy listener (HTTPS_PROXY)
CA_STORE = "/harness/ca-store"  # the harness CA's folder, in the proxy container only
ARM_CA_CERT = "/harness/ca/harness-ca.pem"  # its public certificate, in every arm container
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
        self.kernel = KernelLog(self.run_dir)
        self.probe_lines = 0  # the start probe's refusals, first in the kernel log
        self.run_id = ""
        self.prefix = ""
        self.labels: list[str] = []
        self.arm_ips: dict[str, str] = {}  # the proxy's address on each arm's network
        self.arm_ports: dict[str, int] = {}
        self.https_ports: dict[str, int] = {}
        self.log_prefixes: dict[str, str] = {}  # kernel log prefix -> arm
        self.bridges: dict[str, str] = {}  # arm network's bridge interface -> arm
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
        # The proxy waits for its config: its listeners bind to addresses Docker assigns only
        # once the container is attached to every arm network.
        # Beside it, the arms' DNS server (dns_refuser: every lookup refused and named).
        script = (
            f"while [ ! -e {config_path} ]; do sleep 0.1; done; "
            f"python -m harness.isolation.dns_refuser {config_path} >>{log_path} 2>&1 & "
            f"exec python -m proxy {config_path} >>{log_path} 2>&1"
        )
        # Passed by name, so values never hit a command line; live mode only (record and replay
        # never forward, so they need no key).
        secrets = [k for k in os.environ if k.endswith(SECRET_SUFFIXES)]
        secrets = secrets if settings.mode == "live" else []
        install_ca_cert(self.run_dir)  # also makes the CA on first use
        try:  # before any rule exists: every refusal of the run is followed
            self.kernel.start(self.run_id)
        except KernelLogError as e:
            raise DockerError(f"{e}; the docker backend needs root") from e
        # The proxy's own traffic: only DNS and its vendors' addresses (proxy_rules.py).
        try:
            self.proxy_rule, pinned = proxy_rules.confine(
                net.network_bridge(ctl),
                settings.upstreams,
                live=settings.mode == "live",
                run_id=self.run_id,
                comment=owner.rule_comment(self.run_id),
                ledger_url=settings.ledger_url,
            )
        except firewall.RulesError as e:
            raise DockerError(str(e)) from e
        except proxy_rules.LedgerUnreachableError as e:  # prepare checked; a name moved since
            raise DockerError(f"the proxy cannot reach the PostgreSQL ledger: {e}") from e
        self._probe_rule(ctl)
        docker([
            "run", "-d", "--name", proxy, "--network", ctl, *self.labels, *hardening([]),
            # DNS on port 53 with no capability: only this container's network namespace.
            "--sysctl", f"net.ipv4.ip_unprivileged_port_start={DNS_PORT}",
            *source_mounts(), *identity_mounts(settings),
            "-v", f"{ca_dir()}:{CA_STORE}:ro",
            "-e", "PYTHONPATH=/harness/src", "-e", "PYTHONUNBUFFERED=1", *pinned,
            *[a for k in secrets for a in ("-e", k)],
            "--entrypoint", "sh", self.images.get("proxy", PROXY_IMAGE), "-c", script,
        ])  # fmt: skip
        self.started.append(proxy)
        for arm in settings.arms:
            docker(["network", "connect", self.arm_container(arm), proxy])
        addresses = net.container_addresses(proxy)
        self.arm_ips = {arm: addresses[self.arm_container(arm)] for arm in settings.arms}
        self.arm_ports = {arm: FIRST_ARM_PORT + i for i, arm in enumerate(settings.arms)}
        self.https_ports = {arm: FIRST_HTTPS_PROXY_PORT + i for i, arm in enumerate(settings.arms)}
        for index, arm in enumerate(settings.arms):
            prefix = firewall.log_prefix(self.run_id, arm, index)
            self.log_prefixes[prefix] = arm
            self.bridges[net.network_bridge(self.arm_container(arm))] = arm
            rules = arm_rules.ArmRules(
                bridge=net.network_bridge(self.arm_container(arm)),
                proxy_ip=self.arm_ips[arm],
                tcp_ports=(self.arm_ports[arm], self.https_ports[arm]),
                udp_ports=(DNS_PORT,),
                prefix=prefix,
                comment=owner.rule_comment(self.run_id),
            )
            try:
                arm_rules.add_rules(rules)
            except firewall.RulesError as e:
                raise DockerError(str(e)) from e
        control_ip = addresses[ctl]
        config = ProxyFile(
            settings=settings,
            arm_ports=self.arm_ports,
            arm_hosts=self.arm_ips,
            https_proxy_ports=self.https_ports,
            control_port=CONTROL_PORT,
            control_relay=ControlRelay(host=control_ip, port=RELAY_PORT),
            confdir=CA_STORE,
            vendor_cert=f"{CA_STORE}/{VENDOR_CERT_FILE}",
            ca_bundle=settings.upstream_ca(),
            # The proxy's refusals of non-vendor hosts, merged into egress.jsonl with the rest.
            egress_log=str(egress.proxy_log(self.run_dir)),
            dns={"log": str(egress.proxy_log(self.run_dir).with_name("dns.jsonl"))},
        )
        config.write(config_path)  # atomic: the container waits for the file to appear
        self._wait(proxy, lambda: PROXY_READY in read_text(log_path), "the proxy", log_path)
        self.proxy_info = ProxyInfo.listening(
            self.arm_ips, self.arm_ports, self.https_ports, f"http://{control_ip}:{RELAY_PORT}"
        )
        return self.proxy_info

    # --- arms ------------------------------------------------------------------------------

    async def start_arm(self, name: str, spec: ArmSpec, proxy: ProxyInfo) -> ArmHandle:
        self.specs[name] = spec
        log_path = self._arm_log(name)
        offset = log_path.stat().st_size if log_path.exists() else 0  # restarts append
        try:
            url = await asyncio.to_thread(self._start_arm, name, spec)
        except DockerError as e:
            raise InfraError(f"docker: arm {name!r}: {e}") from e
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        # The ready line first, then the seam: a connection tried before the arm listens can
        # sit unanswered for seconds (SYN retransmits) instead of being refused at once.
        while not any(parse_ready_line(x.strip()) for x in _lines_from(log_path, offset)):
            if time.monotonic() > deadline or not await asyncio.to_thread(self.arm_alive, name):
                raise InfraError(f"arm {name!r} never said it was ready; {self._tail(name)}")
            await asyncio.sleep(0.1)
        async with seam_client(url, timeout=2) as client:
            while True:
                try:
                    await client.health()
                    break
                except Exception as e:  # not up yet: any error until the deadline
                    if time.monotonic() > deadline or not self.arm_alive(name):
                        raise InfraError(
                            f"arm {name!r} did not answer on its seam ({e}); {self._tail(name)}"
                        ) from e
                    await asyncio.sleep(0.2)
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
        proxy_ip, proxy_port = self.arm_ips[name], self.arm_ports[name]
        env = {"TZ": "UTC", "PYTHONUNBUFFERED": "1", **spec.env}
        # Set after the spec's env so a compose file's own URLs cannot point elsewhere.
        env |= sdk_env(proxy_ip, proxy_port)
        https_port = self.https_ports[name]
        env |= proxy_env(f"http://{proxy_ip}:{https_port}", ARM_CA_CERT, proxy_ip)
        env |= {
            "SEAM_HOST": "0.0.0.0",
            "SEAM_PORT": str(SEAM_PORT),
            "HARNESS_ARM": host_name(name),  # the study's arm, whichever worker's copy
            "HARNESS_RUN": self.run_id,
            "HARNESS_GUARD_ARM": name,
            "HARNESS_GUARD_ALLOW": f"{proxy_ip}:{proxy_port},{proxy_ip}:{https_port}",
            "HARNESS_EGRESS_LOG": "/harness/egress/egress.jsonl",
            "PYTHONPATH": "/harness/guard:/harness/src",
            # An image not built FROM harness-arm has no libfaketime: its clock then reaches
            # it on the seam only.
            "LD_PRELOAD": faketime_preload(image),
            "FAKETIME_TIMESTAMP_FILE": "/harness/clock/faketime",
            **FAKETIME_ENV,  # the file re-read on every clock call (harness/isolation/clock.py)
        }
        log_path = self._arm_log(name)
        # sh appends the arm's output to its own log folder (no other arm mounts it), as the
        # local backend's arms do; its guard log is in a folder of its own too.
        script = f'exec "$@" >>/harness/logs/{log_path.name} 2>&1'
        docker([
            "run", "-d", "--name", container, "--network", self.arm_container(name),
            "--hostname", host_name(name), *self.labels, *hardening(spec.cap_add), *source_mounts(),
            *docker_limits.run_flags(self.limits), "-v", f"{disk.tmp}:/tmp",
            "-v", f"{GUARD_DIR}:/harness/guard:ro",
            "-v", f"{clock_dir}:/harness/clock:ro",
            "-v", f"{resolv}:/etc/resolv.conf:ro",
            "-v", f"{self.run_dir / 'ca'}:{Path(ARM_CA_CERT).parent}:ro",
            "-v", f"{guard_log.parent}:/harness/egress",
            "-v", f"{log_path.parent}:/harness/logs",
            "-v", f"{self.work_dir}:{self.work_dir}:ro", "-w", str(self.work_dir),
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

    def _probe_rule(self, ctl: str) -> None:
        """Before run.json may say "enforced": a probe from the proxy's network to port 53 of
        the host's address there must not get through (egress_probe.py)."""
        image = self.images.get("proxy", PROXY_IMAGE)
        run = ["docker", "run", "--rm", "--network", ctl, *self.labels, *hardening([])]
        run += ["--entrypoint", "python", image]
        through, said = egress_probe.probe_docker(run, net.network_gateway(ctl))
        if through:
            raise DockerError(
                f"the proxy's rule did not hold: a probe from its network sent {'; '.join(through)}"
                f" (probe said: {said.strip()!r})"
            )
        self.probe_lines = egress_probe.probe_lines(self.kernel, self.run_id)
        self.proxy_rule += "; checked at start by a probe"

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
        self.kernel.drain()
        entries = self.egress_attempts()
        if self.run_id:  # proxy_egress.jsonl, checked against the rules' counters
            self.proxy_refused = proxy_rules.collect(
                self.run_dir, self.run_id, self.kernel.path, skip=self.probe_lines
            )
        if self.bounds is not None:  # the arms' files, copied out as plain files
            for failure in self.bounds.release():
                log.warning("an arm's disk was not released", error=failure)
            for arm in self.bounds.disks:  # each guard log is now a copy of what was read
                self.book.moved(egress.guard_log(self.run_dir, arm))
        if self.run_id:
            logged = dropped(firewall.rule_counts(self.run_id), self.log_prefixes, entries)
            queried = firewall.dns_counts(self.run_id)
            self.egress_dropped = all_dropped(
                logged, dropped(queried, self.bridges, entries, source="dns")
            )
        self.kernel.stop()
        if self.run_id:
            owner.remove_rules(self.run_id)
        for network in reversed(self.networks):
            docker(["network", "rm", network], check=False)
        self.networks.clear()
        pids.PidFile(self.run_dir).remove()

    def egress_attempts(self) -> list[dict[str, object]]:
        """Guard entries (each attributed to the arm whose folder holds it), the proxy's and
        the kernel log's (attributed by listener and by bridge): every one so far, the new ones
        appended to egress.jsonl."""
        # Copies: this runs in a thread (the stray watch) while a worker may be adding an arm.
        prefixes = dict(self.log_prefixes)
        guards = egress.guard_entries(self.run_dir, list(prefixes.values()), self.book)
        entries = [egress.real_time(entry, self.clock_history) for entry in guards]
        entries += egress.proxy_entries(self.run_dir, self.book)
        entries += self.kernel.entries(self.book, prefixes)
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

    def _tail(self, arm: str) -> str:
        text = "\n".join(_lines_from(self._arm_log(arm), 0))[-2000:]
        return f"its log {self._arm_log(arm)}:\n{text}"

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


def _lines_from(path: Path, offset: int) -> list[str]:
    """The arm's log from `offset`: the arm writes it, so never through a symlink it planted
    and at most egress.READ_MAX bytes."""
    with contextlib.suppress(OSError), open(path, "rb", opener=_no_follow) as f:
        f.seek(offset)
        return f.read(egress.READ_MAX).decode(errors="replace").splitlines()
    return []


def _no_follow(path: str, flags: int) -> int:
    return os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK)
