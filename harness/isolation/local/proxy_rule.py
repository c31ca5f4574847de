"""The OS rule on the proxy's own traffic for the local backend, where the harness runs as root.

The local proxy is a host process, so its packets are told apart by the cgroup (v2) it runs in:
the harness makes `harness-<run hash>-proxy` under the cgroup2 root, the proxy's child process
moves itself into it before it execs (so not one packet leaves from outside it), and
`iptables -m cgroup --path` rules in OUTPUT let through only what proxy_rules allows (DNS queries
to the host's resolvers and the vendors' addresses in live mode, proxy_dns.py; nothing in record
and replay mode), logging the rest to the kernel log, which is followed from before the first
rule (kernel_log.py) and read into proxy_egress.jsonl at the end, as on the docker backend.

Before run.json may say "enforced", a probe from the cgroup tries what the rule forbids
(egress_probe.py) and the start fails if anything gets through. The proxy runs without the
capabilities, or the cgroup filesystem, to leave its cgroup or change the rules
(proxy_confine.py, which says what is still not enforced).

Where it cannot (not root, no cgroup2 mount, an iptables without the cgroup match), the rule is
not enforced and run.json's `proxy_rule` and the run's summary say why.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path

import structlog

from harness.isolation import egress_probe, firewall, proxy_dns, proxy_rules
from harness.isolation.base import ProxySettings
from harness.isolation.kernel_log import KernelLog, KernelLogError
from harness.isolation.local import proxy_confine
from harness.isolation.owner import OwnedRuns

log = structlog.get_logger("harness.isolation.local")


def cgroup2_root() -> Path | None:
    """Where the cgroup2 hierarchy is mounted (`/sys/fs/cgroup`, or `.../unified` on a hybrid
    host), or None."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/mounts").read_text().splitlines():
            fields = line.split()
            if len(fields) > 2 and fields[2] == "cgroup2":
                return Path(fields[1])
    return None


def unavailable() -> str | None:
    """Why the rule cannot be enforced here, or None."""
    if os.geteuid() != 0:
        return "the local backend is not running as root (run as root, or --isolation docker)"
    if cgroup2_root() is None:
        return "no cgroup2 hierarchy is mounted"
    try:
        probe = firewall.run_tool("iptables", ["-m", "cgroup", "--help"])
    except firewall.RulesError as e:
        return str(e)
    if "--path" not in probe.stdout:
        return "this iptables has no cgroup match"
    return None


class LocalProxyRule:
    """Set up once before the proxy starts (`start`, then `preexec` for its spawn); `stop`
    after it has exited returns its refusals."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.kernel = KernelLog(run_dir)
        self.said = "not enforced: the proxy was not started"
        self.run_id = ""
        self.cgroup: Path | None = None
        self._tried = False
        self.rules: proxy_rules.LocalProxyRules | None = None
        self.unresolved: list[str] = []
        self.ledger: tuple[proxy_rules.Target, ...] = ()  # a postgresql:// ledger's addresses
        self.probe_lines = 0  # the start probe's refusals, first in the kernel log: not the proxy's

    def start(self, settings: ProxySettings, comment: str) -> None:
        if self._tried:  # a retried start (a port taken): the same cgroup, the new ports
            if self.run_id and self._rules(settings, comment) != self.rules:
                self._remove_rules()
                self._install(settings, comment)
            return
        self._tried = True
        why = unavailable()
        root = cgroup2_root()
        if why is not None or root is None:
            self.said = f"not enforced: {why}"
            log.warning("the proxy's own traffic is not confined", why=why)
            return
        name = f"harness-{firewall.run_tag(settings.run_id)}-proxy-{os.getpid()}"
        self.cgroup = root / name
        self.cgroup.mkdir(exist_ok=True)
        try:
            self.kernel.start(settings.run_id)
        except KernelLogError as e:
            self.said = f"not enforced: {e}"
            self._remove_cgroup()
            return
        self.run_id = settings.run_id
        self._install(settings, comment)
        self._probe()

    def _rules(self, settings: ProxySettings, comment: str) -> proxy_rules.LocalProxyRules:
        assert self.cgroup is not None
        live = settings.mode == "live"
        targets, self.unresolved = proxy_rules.vendor_targets(settings.upstreams, live)
        self.ledger = ()
        if live and settings.ledger_url:  # the proxy books every call there itself
            ledger, unresolved = proxy_rules.ledger_targets(settings.ledger_url)
            self.ledger = tuple(ledger)
            targets += ledger
            self.unresolved += unresolved
        # Its own stub stream server (record and replay mode play streamed replies through it).
        own = (settings.stream_port,) if settings.stream_port else ()
        resolvers = proxy_dns.resolvers() if live else ()
        return proxy_rules.LocalProxyRules(
            self.cgroup.name, tuple(targets), resolvers, self.run_id, comment, own
        )

    def _install(self, settings: ProxySettings, comment: str) -> None:
        rules = self._rules(settings, comment)
        proxy_rules.add_rules(rules)  # RulesError: fail closed, the caller stops the run
        self.rules = rules
        allowed = [
            f"{'ledger ' if t in self.ledger else ''}{t.host}={t.address}:{t.port}"
            for t in rules.targets
        ]
        allowed += [f"its stream server 127.0.0.1:{port}" for port in rules.loopback_ports]
        dns = f"DNS queries (UDP) to {', '.join(rules.resolvers)} and " if rules.resolvers else ""
        self.said = f"enforced: the proxy may open {dns}TCP to {', '.join(allowed) or 'nothing'}"
        if self.unresolved:
            self.said += f" (did not resolve: {', '.join(self.unresolved)})"
        self.said += (
            "; checked at start by a probe; the proxy has no capabilities and no cgroup "
            f"filesystem (not enforced: {proxy_confine.NOT_ENFORCED})"
        )

    def _probe(self) -> None:
        """Try what the rule forbids from the proxy's cgroup; RulesError (the rules removed)
        when anything got through. Then count the probe's refusals in the kernel log, so they
        are never read as the proxy's."""
        assert self.rules is not None
        resolvers = self.rules.resolvers
        join = self.preexec()
        assert join is not None
        through, said = egress_probe.probe_local(
            join, proxy_dns.non_resolvers(resolvers), resolvers
        )
        if through:
            self.stop()
            raise firewall.RulesError(
                f"the rule did not hold: a probe from the proxy's cgroup sent {'; '.join(through)}"
                f" (probe said: {said.strip()!r})"
            )
        self.probe_lines = egress_probe.probe_lines(self.kernel, self.run_id)

    def preexec(self) -> Callable[[], None] | None:
        """Run in the proxy's child before exec: it joins the proxy's cgroup, confined
        (proxy_confine.py)."""
        if self.cgroup is None or not self.run_id:
            return None
        return proxy_confine.preexec(str(self.cgroup / "cgroup.procs"))

    def stop(self) -> dict[str, int]:
        """The proxy has exited: its refusals (proxy_egress.jsonl), then the rules and the
        cgroup removed."""
        if not self.run_id:
            return {}
        self.kernel.drain()
        try:
            return proxy_rules.collect(
                self.run_dir, self.run_id, self.kernel.path, skip=self.probe_lines
            )
        finally:
            self.kernel.stop()
            self._remove_rules()
            self._remove_cgroup()
            self.run_id = ""

    def _remove_rules(self) -> None:
        run_id = self.run_id
        firewall.remove_where(lambda comment: comment.startswith(f"harness.run={run_id} "))
        self.rules = None

    def _remove_cgroup(self) -> None:
        if self.cgroup is not None:
            with contextlib.suppress(OSError):
                self.cgroup.rmdir()
            self.cgroup = None


def remove_stale_cgroups(runs: OwnedRuns) -> list[str]:
    """`harness cleanup`: the proxy cgroups of the given runs whose harness process is gone (a
    run killed with -9 leaves its cgroup; its rules go with the rest of the run's, by their
    comment). Another run's cgroup is never touched."""
    root = cgroup2_root()
    done: list[str] = []
    if root is None:
        return done
    tags = {firewall.run_tag(run_id) for run_id in runs.ids}
    for path in sorted(root.glob("harness-*-proxy-*")):
        tag, pid = path.name.split("-")[1], path.name.rsplit("-", 1)[-1]
        if tag in tags and pid.isdigit() and not Path(f"/proc/{pid}").exists():
            with contextlib.suppress(OSError):
                path.rmdir()  # refused while a process is still in it
                done.append(f"removed the proxy cgroup {path.name}")
    return done
