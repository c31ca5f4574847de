"""The docker run's firewall: the kernel log followed from before the first rule, the rule on
the proxy's own traffic (proxy_rules.py) checked by a probe, each arm's rules (arm_rules.py),
and, once the containers are gone, what the rules refused and what the kernel log lost.

How the orchestrator reaches a seam with no port published (internal networks cannot publish):
the host has an address on every bridge, so it connects to the arm's address directly; that is
host-originated traffic (OUTPUT), which Docker's isolation does not block, and the arm's replies
belong to a connection the host opened. The reverse direction is closed by arm_rules'
iptables and ip6tables rules, matched on the arm network's bridge interface (not its subnet:
a forged source address is still caught): every packet from an arm's bridge that is not part of
a connection the host opened, to the host (INPUT) or to anything but its proxy listeners
(DOCKER-USER), is logged to the kernel log with a prefix naming the run and arm, and refused.
So "arms reach nothing but the proxy" holds with no relay and no extra network per arm.
"""

from __future__ import annotations

from pathlib import Path

from harness.isolation import egress_probe, firewall, owner, proxy_rules
from harness.isolation.base import ProxySettings
from harness.isolation.dns_refuser import DNS_PORT
from harness.isolation.docker import arm_rules
from harness.isolation.docker.cli import DockerError
from harness.isolation.docker.net import network_bridge, network_gateway
from harness.isolation.egress_book import EgressBook
from harness.isolation.kernel_log import KernelLog, KernelLogError, all_dropped, dropped


class RunRules:
    """One run's rules, by its id (set when the proxy starts): `confine_proxy` before the proxy
    starts, `confine_arm` for each arm network, `entries` while it runs, then `proxy_refused`,
    `dropped` and `remove`."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.kernel = KernelLog(run_dir)
        self.run_id = ""
        self.probe_lines = 0  # the start probe's refusals, first in the kernel log
        self.log_prefixes: dict[str, str] = {}  # kernel log prefix -> arm
        self.bridges: dict[str, str] = {}  # arm network's bridge interface -> arm

    def confine_proxy(
        self, ctl: str, settings: ProxySettings, probe_run: list[str]
    ) -> tuple[str, list[str]]:
        """The kernel log followed, then the proxy's traffic on network `ctl` confined to DNS
        and its vendors' addresses, and checked by a probe run by `probe_run` (`docker run` up
        to a python entrypoint). Returns what run.json says of the rule and the `--add-host`
        flags that pin the vendor hosts for the proxy."""
        run_id = self.run_id
        try:  # before any rule exists: every refusal of the run is followed
            self.kernel.start(run_id)
        except KernelLogError as e:
            raise DockerError(f"{e}; the docker backend needs root") from e
        try:
            said, pinned = proxy_rules.confine(
                network_bridge(ctl),
                settings.upstreams,
                live=settings.mode == "live",
                run_id=run_id,
                comment=owner.rule_comment(run_id),
                ledger_url=settings.ledger_url,
            )
        except firewall.RulesError as e:
            raise DockerError(str(e)) from e
        except proxy_rules.LedgerUnreachableError as e:  # prepare checked; a name moved since
            raise DockerError(f"the proxy cannot reach the PostgreSQL ledger: {e}") from e
        self._probe(ctl, probe_run)
        return f"{said}; checked at start by a probe", pinned

    def _probe(self, ctl: str, probe_run: list[str]) -> None:
        """Before run.json may say "enforced": a probe from the proxy's network to port 53 of
        the host's address there must not get through (egress_probe.py)."""
        through, said = egress_probe.probe_docker(probe_run, network_gateway(ctl))
        if through:
            raise DockerError(
                f"the proxy's rule did not hold: a probe from its network sent {'; '.join(through)}"
                f" (probe said: {said.strip()!r})"
            )
        self.probe_lines = egress_probe.probe_lines(self.kernel, self.run_id)

    def confine_arm(
        self, arm: str, index: int, network: str, proxy_ip: str, tcp_ports: tuple[int, int]
    ) -> None:
        """Arm `arm`'s network bridge confined to its proxy listeners and the DNS refuser,
        every refusal logged with a prefix naming the arm."""
        prefix = firewall.log_prefix(self.run_id, arm, index)
        self.log_prefixes[prefix] = arm
        bridge = network_bridge(network)
        self.bridges[bridge] = arm
        rules = arm_rules.ArmRules(
            bridge=bridge,
            proxy_ip=proxy_ip,
            tcp_ports=tcp_ports,
            udp_ports=(DNS_PORT,),
            prefix=prefix,
            comment=owner.rule_comment(self.run_id),
        )
        try:
            arm_rules.add_rules(rules)
        except firewall.RulesError as e:
            raise DockerError(str(e)) from e

    def entries(self, book: EgressBook) -> list[dict[str, object]]:
        """The kernel log's new refusals, each attributed to its arm by the rule's prefix."""
        # A copy: this runs in a thread (the stray watch) while a worker may be adding an arm.
        return self.kernel.entries(book, dict(self.log_prefixes))

    def proxy_refused(self) -> dict[str, int]:
        """proxy_egress.jsonl written, checked against the rules' counters."""
        return proxy_rules.collect(
            self.run_dir, self.run_id, self.kernel.path, skip=self.probe_lines
        )

    def dropped(self, entries: list[dict[str, object]]) -> dict[str, int]:
        """Per arm, the refusals the kernel log and the DNS refuser's log lost: the rules'
        packet counters less the `entries` read."""
        logged = dropped(firewall.rule_counts(self.run_id), self.log_prefixes, entries)
        queried = firewall.dns_counts(self.run_id)
        return all_dropped(logged, dropped(queried, self.bridges, entries, source="dns"))

    def remove(self) -> None:
        self.kernel.stop()
        if self.run_id:
            owner.remove_rules(self.run_id)
