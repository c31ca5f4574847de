"""The local backend: the proxy and every arm as subprocesses of the harness on 127.0.0.1.

Isolation here is weaker than docker's and the run header says so (`isolation: local`): each
arm gets its own proxy listener (so calls are attributed by port), a minimal environment with
placeholder keys only, and a socket guard (guard/sitecustomize.py) that refuses and logs every
connection a Python arm attempts to anything but its listener and its own seam. The clock is
pinned with libfaketime when the Debian package is installed, else only passed on the seam.

Each arm's guard writes to a log of its own (`egress/<arm>/egress.jsonl`) and every line there is
attributed to that arm whatever it says (harness/isolation/egress.py); the proxy's refusals go to
`egress/proxy/`. Local arms run as the harness's user, so this attributes what a Python arm's
guard saw; it cannot stop an arm writing elsewhere (the docker backend's mounts do).
"""

from __future__ import annotations

import asyncio
import math
import signal
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import structlog

from arms.client import SeamError
from arms.server import parse_ready_line
from harness.isolation import egress, firewall, owner, pids
from harness.isolation.base import (
    PROXY_READY,
    ArmHandle,
    ClockPinning,
    InfraError,
    IsolationBackend,
    ProxyInfo,
    ProxySettings,
)
from harness.isolation.clock import FAKETIME_ENV, PIN_METHOD, SEAM_ONLY, offset_line, preload
from harness.isolation.egress_book import EgressBook
from harness.isolation.local import limits as local_limits
from harness.isolation.local import memory_cgroup
from harness.isolation.local.arm_env import argv, arm_env, find_libfaketime, proxy_env_for
from harness.isolation.local.processes import signal_group, spawn, terminate, wait_for_line
from harness.isolation.local.proxy_rule import LocalProxyRule, remove_stale_cgroups
from harness.isolation.ports import free_port, free_ports, start_on_free_ports
from harness.isolation.proxy_ca import VENDOR_CERT_FILE, ca_dir, install_ca_cert
from harness.isolation.seam_http import seam_client
from harness.study import ArmSpec
from rundir.atomic import write_atomic
from rundir.control import ProxyFile
from rundir.runs import AppliedLimits

log = structlog.get_logger("harness.isolation.local")
STOP_TIMEOUT_S = 15.0


class LocalBackend(IsolationBackend):
    isolation = "local"

    def __init__(self, run_dir: Path, work_dir: Path | None = None) -> None:
        self.run_dir = run_dir
        # The study's folder: arms start there (as in the docker backend), so a relative arm
        # command or a file the arm reads next to its study is found wherever harness runs.
        self.work_dir = (work_dir or Path.cwd()).resolve()
        self.logs = run_dir / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.egress_log = run_dir / "egress.jsonl"
        self.book = EgressBook(self.egress_log)
        self.faketime = find_libfaketime()
        self.clock_pinning: ClockPinning = "libfaketime" if self.faketime else "seam-only"
        self.clock_pin = PIN_METHOD if self.faketime else SEAM_ONLY
        self.preload = preload(self.faketime) if self.faketime else ""
        # Per arm: (real time written, whole-second offset) of each pin, so a guard line the arm
        # stamped with its pinned clock is read back in real time (egress.real_time), as on
        # docker: what came after the arm's last turn (teardown) is then told by real times.
        self.clock_history: dict[str, list[tuple[float, int]]] = {}
        self.proxy: subprocess.Popen[bytes] | None = None
        self.proxy_info: ProxyInfo | None = None
        self.arm_ports: dict[str, int] = {}
        self.https_ports: dict[str, int] = {}
        self.ca_cert = Path()
        self.arms: dict[str, subprocess.Popen[bytes]] = {}
        self.specs: dict[str, ArmSpec] = {}
        self.handles: dict[str, ArmHandle] = {}
        self.pids = pids.PidFile(run_dir)
        self.arm_limits: dict[str, AppliedLimits] = {}
        # The OS rule on the proxy's own traffic, where this runs as root (proxy_rule.py).
        self.proxy_guard = LocalProxyRule(self.run_dir)
        self.memory: memory_cgroup.MemoryCgroups | None = None  # the arms' (made with the proxy)

    @classmethod
    def cleanup(
        cls, run_root: Path, *, force: bool = False, runs: owner.OwnedRuns | None = None
    ) -> list[str]:
        # The processes of pids.json first, then the OS rules that confined their proxies (the
        # OUTPUT chain's), then the proxies' cgroups those rules matched on: of the runs under
        # run_root only (owner.OwnedRuns), never another root's.
        runs = owner.owned_runs(run_root) if runs is None else runs
        done = pids.cleanup(run_root, force=force)
        done += owner.remove_stale_rules(runs, force, chain=lambda chain: chain == "OUTPUT")
        done += memory_cgroup.remove_stale({firewall.run_tag(run_id) for run_id in runs.ids})
        return done + remove_stale_cgroups(runs)

    # --- proxy -----------------------------------------------------------------------------

    async def start_proxy(self, settings: ProxySettings) -> ProxyInfo:
        return await start_on_free_ports(lambda: self._start_proxy(settings), "proxy")

    async def _start_proxy(self, settings: ProxySettings) -> ProxyInfo:
        if egress.PROXY_DIR in settings.arms:  # its guard log would be the proxy's
            raise InfraError(f"rename arm {egress.PROXY_DIR!r}: the name is the proxy's")
        ports = free_ports(2 * len(settings.arms) + 2)
        self.arm_ports = dict(zip(settings.arms, ports, strict=False))
        self.https_ports = dict(zip(settings.arms, ports[len(settings.arms) :], strict=False))
        control_port = ports[-2]
        # The stub stream server's port, known before the proxy starts: the proxy's rule lets it
        # reach exactly this port on loopback (proxy_rule.py), no other host service.
        settings = settings.model_copy(update={"stream_port": ports[-1]})
        self.ca_cert = install_ca_cert(self.run_dir)
        # The proxy's refusals of non-vendor hosts, merged into egress.jsonl with the guards'.
        config = ProxyFile(
            settings=settings,
            arm_ports=self.arm_ports,
            https_proxy_ports=self.https_ports,
            control_port=control_port,
            confdir=str(ca_dir()),
            vendor_cert=str(ca_dir() / VENDOR_CERT_FILE),
            ca_bundle=settings.upstream_ca(),
            egress_log=str(egress.proxy_log(self.run_dir).resolve()),
        )
        config_path = self.run_dir / "proxy.json"
        config.write(config_path)
        if self.memory is None:
            self.memory = memory_cgroup.MemoryCgroups(settings.run_id)
        log_path = self.logs / "proxy.log"
        offset = log_path.stat().st_size if log_path.exists() else 0
        try:  # before the proxy exists, so not one of its packets leaves unconfined
            self.proxy_guard.start(settings, owner.rule_comment(settings.run_id))
        except firewall.RulesError as e:
            raise InfraError(f"cannot confine the proxy's own traffic: {e}") from e
        self.proxy_rule = self.proxy_guard.said
        self.proxy = spawn(
            self.pids,
            "proxy",
            [sys.executable, "-m", "proxy", str(config_path)],
            proxy_env_for(settings.mode),
            log_path,
            bounds=self.proxy_guard.preexec(),
        )
        await wait_for_line(self.proxy, log_path, offset, lambda line: line == PROXY_READY, "proxy")
        self.proxy_info = ProxyInfo.listening(
            dict.fromkeys(settings.arms, "127.0.0.1"),
            self.arm_ports,
            self.https_ports,
            f"http://127.0.0.1:{control_port}",
        )
        return self.proxy_info

    # --- arms ------------------------------------------------------------------------------

    async def start_arm(self, name: str, spec: ArmSpec, proxy: ProxyInfo) -> ArmHandle:
        # The seam port is picked here and bound by the arm: another process (a parallel run, a
        # worker's arm) can take it in between, seen once under load as the arm's "Address
        # already in use". The arm is then started again on another port, as the proxy is.
        return await start_on_free_ports(lambda: self._start_arm(name, spec, proxy), name)

    async def _start_arm(self, name: str, spec: ArmSpec, proxy: ProxyInfo) -> ArmHandle:
        self.specs[name] = spec
        seam_port = free_port()
        proxy_port = self.arm_ports[name]
        guard_log = egress.guard_log(self.run_dir, name)
        ports = (proxy_port, self.https_ports[name], seam_port)
        env = arm_env(name, spec, ports, self.ca_cert, guard_log)
        if self.faketime:
            clock_file = self._clock_file(name)
            if not clock_file.exists():
                write_atomic(clock_file, "+0\n")
            env |= FAKETIME_ENV | {
                "LD_PRELOAD": self.preload,
                "FAKETIME_TIMESTAMP_FILE": str(clock_file.resolve()),
            }
        (self.logs / name).mkdir(exist_ok=True)
        log_path = self.logs / name / "arm.log"
        offset = log_path.stat().st_size if log_path.exists() else 0
        # The study's bounds: memory by a cgroup where one can be made (memory_cgroup.py), the
        # rest as far as rlimits reach (limits.py says what they miss).
        memory = self.memory or memory_cgroup.MemoryCgroups(self.run_dir.name)
        self.memory = memory
        try:
            procs = memory.make(name, self.limits.memory)
        except OSError as e:
            raise InfraError(f"cannot bound arm {name!r}'s memory with a cgroup: {e}") from e
        bounds = local_limits.preexec(self.limits, procs)
        process = spawn(
            self.pids, name, argv(spec), env, log_path, cwd=self.work_dir, bounds=bounds
        )
        self.arms[name] = process
        how = memory.how if procs else ""
        self.arm_limits[name] = local_limits.applied(self.limits, how, memory.swap_bounded())
        line = await wait_for_line(
            process, log_path, offset, lambda text: parse_ready_line(text) is not None, name
        )
        url = parse_ready_line(line) or ""
        async with seam_client(url, timeout=10) as client:
            try:
                await client.health()
            except (SeamError, OSError, Exception) as e:
                raise InfraError(f"arm {name!r} started but its seam does not answer: {e}") from e
        handle = ArmHandle(name=name, seam_url=url, pid=process.pid)
        self.handles[name] = handle
        return handle

    def applied_limits(self) -> dict[str, AppliedLimits]:
        return dict(self.arm_limits)

    def limit_hits(self, name: str) -> list[str]:
        # The memory cgroup's OOM kills (memory_cgroup.py); the rlimits leave no trace.
        return ["memory"] if self.memory is not None and self.memory.met(name) else []

    def arm_alive(self, name: str) -> bool:
        process = self.arms.get(name)
        return process is not None and process.poll() is None

    async def restart_arm(self, name: str) -> ArmHandle:
        if self.proxy_info is None:
            raise InfraError("the proxy is not running")
        process = self.arms.pop(name, None)
        if process is not None:
            await asyncio.to_thread(terminate, process, STOP_TIMEOUT_S)
        return await self.start_arm(name, self.specs[name], self.proxy_info)

    def pin_clock(self, name: str, clock: datetime) -> None:
        if not self.faketime:
            return
        # A relative offset from the real clock, written when the item starts: the arm then
        # sees the item's date and time passing normally from there. libfaketime re-reads the
        # file on every clock call, so the pin holds once written (harness/isolation/clock.py).
        now = time.time()
        offset, line = offset_line(clock, now)
        self.clock_history.setdefault(name, []).append((now, math.ceil(offset)))
        write_atomic(self._clock_file(name), line, durable=False)  # read live only: no fsync

    def _clock_file(self, name: str) -> Path:
        return self.run_dir / "clocks" / name

    # --- stopping --------------------------------------------------------------------------

    async def stop(self) -> None:
        for process in self.arms.values():
            signal_group(process, signal.SIGTERM)
        for process in self.arms.values():
            await asyncio.to_thread(terminate, process, STOP_TIMEOUT_S)
        self.arms.clear()
        if self.memory is not None:
            self.memory.remove_all()
        if self.proxy is not None:
            # SIGINT: mitmproxy shuts down and the addon flushes the call log, settles live calls.
            await asyncio.to_thread(terminate, self.proxy, 30.0, signal.SIGINT)
            self.proxy = None
        self.proxy_refused = await asyncio.to_thread(self.proxy_guard.stop)
        self.pids.remove()

    def egress_attempts(self) -> list[dict[str, object]]:
        """Each arm's guard entries (attributed to the arm whose log holds them) and the
        proxy's: every one so far, the new ones appended to egress.jsonl."""
        # A copy: this runs in a thread (the stray watch) while a worker may be adding an arm.
        entries = egress.guard_entries(self.run_dir, list(self.specs), self.book)
        if self.faketime:  # the guards stamp the arms' pinned clocks
            entries = [egress.real_time(entry, self.clock_history) for entry in entries]
        entries += egress.proxy_entries(self.run_dir, self.book)
        self.book.add(entries)
        return list(self.book.entries)

    # --- helpers ---------------------------------------------------------------------------
