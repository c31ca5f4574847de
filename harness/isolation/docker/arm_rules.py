"""The host firewall rules that confine each arm container (the shared machinery that runs
iptables and reads what the rules caught is harness/isolation/firewall.py).

Why rules on the host at all: Docker's `--internal` flag stops forwarding out of a network, but a
container still reaches the host itself through its bridge's gateway address (the host's INPUT
chain), and a guard inside the arm covers Python code only.

Why they match the arm network's bridge interface (`-i br-<id>`), not its subnet: an arm that
holds NET_RAW (a study may give it back) writes any source address it likes into a packet, so
"from the arm's subnet" misses a forged one; the interface a frame arrived on cannot be forged
from inside the container. Only the arm and the proxy sit on that bridge, and the proxy starts
nothing there, so everything new arriving on it is the arm's.

Why IPv6 too: the containers run with IPv6 disabled (sysctls), but a raw frame needs no address
of its own, and the host's bridge holds an fe80:: link-local address on every network. So every
IPv6 packet arriving on an arm's bridge is logged and refused, in INPUT and FORWARD (docker.io
20.10 makes no DOCKER-USER chain in ip6tables unless its daemon enables IPv6).

What is refused and logged: in INPUT (the host itself) every packet from the arm's bridge that
does not belong to a connection the host opened (the orchestrator calling the arm's seam); in
DOCKER-USER (forwarded and, with br_netfilter, bridged traffic) the same, except the arm's own
proxy listeners (and the DNS refuser) on the proxy's address. TCP, UDP, ICMP, any protocol: the
match is on conntrack state, not on ports. LOG first with a prefix naming the run and the arm,
then REJECT (the arm sees "refused" at once instead of hanging until its timeout).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.isolation.firewall import NOT_THE_HOSTS_OWN, TOOLS, RulesError, has_chain, run_tool


@dataclass(frozen=True)
class ArmRules:
    """The rules confining one arm's bridge: everything new but its proxy listeners."""

    bridge: str  # the arm network's host interface, br-<12 id chars>
    proxy_ip: str  # the proxy's IPv4 address on the arm's network
    tcp_ports: tuple[int, ...]  # the arm's listeners on the proxy (base URL, HTTPS_PROXY)
    prefix: str
    comment: str
    udp_ports: tuple[int, ...] = field(default=())  # the DNS refuser on the proxy, if any

    def specs(self, tool: str) -> list[tuple[str, list[str]]]:
        """(chain, rule) in the order they must take effect, for `tool`."""
        comment = ["-m", "comment", "--comment", self.comment]
        user_chain = tool == "iptables" or has_chain(tool, "DOCKER-USER")
        forward = "DOCKER-USER" if user_chain else "FORWARD"
        rules: list[tuple[str, list[str]]] = []
        if tool == "iptables":
            allowed = [("tcp", p) for p in self.tcp_ports] + [("udp", p) for p in self.udp_ports]
            for proto, port in allowed:
                match = ["-i", self.bridge, "-d", self.proxy_ip, "-p", proto, "--dport", str(port)]
                rules.append((forward, [*match, *comment, "-j", "RETURN"]))
        for chain in ("INPUT", forward):
            base = ["-i", self.bridge]
            # IPv6: no connection of the host's runs over it, so every packet is refused.
            base += NOT_THE_HOSTS_OWN if tool == "iptables" else []
            base += comment
            rules.append((chain, [*base, "-j", "LOG", "--log-prefix", self.prefix]))
            rules.append((chain, [*base, "-j", "REJECT"]))
        return rules


def add_rules(rules: ArmRules) -> None:
    """Install both families; fail closed: an arm is never started half-confined."""
    for tool in TOOLS:
        specs = rules.specs(tool)
        # Inserted at position 1 in reverse, so they end up first and in the listed order.
        for chain, spec in reversed(specs):
            proc = run_tool(tool, ["-I", chain, "1", *spec])
            if proc.returncode != 0:
                raise RulesError(f"{tool} -I {chain} failed: {proc.stderr.strip()}")
