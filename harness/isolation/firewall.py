"""The host firewall that confines each arm container: iptables and ip6tables rules, and what
they caught in the kernel log.

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

Every rule carries the comment the caller gives (`harness.run=<id> owner=<pid>:<start>`) so
teardown, and `harness cleanup` after a crash, find exactly the rules a run added.
"""

from __future__ import annotations

import contextlib
import hashlib
import ipaddress
import re
import shlex
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

# iptables --log-prefix takes at most 29 characters.
_PREFIX_MAX = 29
_KERNEL_LINE = re.compile(r"^(?P<time>\S+)\s+(?P<prefix>harness \S+ \S+) (?P<rest>.*)$")
TOOLS = ("iptables", "ip6tables")
_NOT_THE_HOSTS_OWN = ["-m", "conntrack", "!", "--ctstate", "ESTABLISHED,RELATED"]


class RulesError(RuntimeError):
    """An iptables command failed; the message has its stderr."""


def run_tag(run_id: str) -> str:
    """The short hash of a run's id its log prefixes carry (the kernel-log follower's filter)."""
    return hashlib.sha256(run_id.encode()).hexdigest()[:6]


def log_prefix(run_id: str, arm: str, index: int) -> str:
    """`harness <run hash> <arm> `: the run's id is too long for the 29-character limit, so a
    short hash of it; an arm name that does not fit becomes `armN` (its index)."""
    tag = run_tag(run_id)
    prefix = f"harness {tag} {arm} "
    return prefix if len(prefix) <= _PREFIX_MAX else f"harness {tag} arm{index} "


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
        user_chain = tool == "iptables" or _has_chain(tool, "DOCKER-USER")
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
            base += _NOT_THE_HOSTS_OWN if tool == "iptables" else []
            base += comment
            rules.append((chain, [*base, "-j", "LOG", "--log-prefix", self.prefix]))
            rules.append((chain, [*base, "-j", "REJECT"]))
        return rules


def _run(tool: str, args: Sequence[str]) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            [tool, "-w", "10", *args], capture_output=True, text=True, check=False, timeout=30
        )
    except FileNotFoundError as e:
        raise RulesError(f"{tool} is not installed (apt-get install -y iptables)") from e


def _has_chain(tool: str, chain: str) -> bool:
    with contextlib.suppress(RulesError):
        return _run(tool, ["-S", chain]).returncode == 0
    return False


def add_rules(rules: ArmRules) -> None:
    """Install both families; fail closed: an arm is never started half-confined."""
    for tool in TOOLS:
        specs = rules.specs(tool)
        # Inserted at position 1 in reverse, so they end up first and in the listed order.
        for chain, spec in reversed(specs):
            proc = _run(tool, ["-I", chain, "1", *spec])
            if proc.returncode != 0:
                raise RulesError(f"{tool} -I {chain} failed: {proc.stderr.strip()}")


def remove_where(wanted: Callable[[str], bool]) -> int:
    """Delete every rule (both families, every chain) whose comment `wanted` accepts."""
    removed = 0
    for tool in TOOLS:
        try:
            listing = _run(tool, ["-S"]).stdout
        except RulesError:
            continue
        for line in listing.splitlines():
            words = shlex.split(line)
            if words[:1] != ["-A"] or "--comment" not in words:
                continue
            if wanted(words[words.index("--comment") + 1]):
                with contextlib.suppress(RulesError):
                    if _run(tool, ["-D", *words[1:]]).returncode == 0:
                        removed += 1
    return removed


def rule_counts(run_id: str) -> dict[str, int]:
    """{log prefix: packets its LOG rules saw} for the run's rules, from the firewall's own
    counters (both families, every chain): the number of refused packets whatever the kernel
    log kept, the cross-check of what egress.jsonl names."""
    counts: dict[str, int] = {}
    for tool in TOOLS:
        try:
            listing = _run(tool, ["-S", "-v"]).stdout
        except RulesError:
            continue
        for line in listing.splitlines():
            if "--log-prefix" not in line or f"harness.run={run_id} " not in line + " ":
                continue
            words = shlex.split(line)
            with contextlib.suppress(ValueError, IndexError):
                packets = int(words[words.index("-c") + 1])
                prefix = words[words.index("--log-prefix") + 1]
                counts[prefix] = counts.get(prefix, 0) + packets
    return counts


def dns_counts(run_id: str) -> dict[str, int]:
    """{bridge: packets} that reached the DNS refuser through the run's rules (the RETURN rule
    letting an arm's UDP to port 53 of its proxy address through): every query an arm sent, the
    cross-check of the refuser's lines (a flood can outrun it and fill its socket's buffer)."""
    counts: dict[str, int] = {}
    with contextlib.suppress(RulesError):
        for line in _run("iptables", ["-S", "-v"]).stdout.splitlines():
            words = shlex.split(line)
            ours = f"harness.run={run_id} " in line + " " and "RETURN" in words
            if not ours or "udp" not in words or "53" not in words:
                continue
            with contextlib.suppress(ValueError, IndexError):
                bridge = words[words.index("-i") + 1]
                counts[bridge] = counts.get(bridge, 0) + int(words[words.index("-c") + 1])
    return counts


def kernel_attempts(prefixes: dict[str, str], lines: list[str]) -> list[dict[str, object]]:
    """Refused packets from kernel-log lines (`<ISO time> <message>`, as kmsg_follow writes
    them), for the given {log prefix: arm}.

    Each LOG line is one packet the rules refused. The arm is the one whose bridge the rule with
    that prefix matches (the line's IN=), whatever the packet says its source is.
    """
    found: list[dict[str, object]] = []
    for line in lines:
        match = _KERNEL_LINE.match(line)
        if not match or f"{match['prefix']} " not in prefixes:
            continue
        fields = dict(f.split("=", 1) for f in match["rest"].split() if "=" in f)
        port, dst = fields.get("DPT"), _address(fields.get("DST", "?"))
        host = f"[{dst}]" if ":" in dst else dst
        destination = f"{host}:{port}" if port else dst
        found.append(
            {
                "schema": 1,
                "arm": prefixes[f"{match['prefix']} "],
                "destination": destination,
                "protocol": fields.get("PROTO", "?").lower(),
                "claimed_source": _address(fields.get("SRC", "?")),
                "interface": fields.get("IN", "?"),
                "time": match["time"].replace(",", "."),
                "source": "kernel",
            }
        )
    return found


def _address(text: str) -> str:
    """The kernel logs IPv6 addresses in full (`fe80:0000:...`): the short form, as users and
    `ip addr` write them."""
    with contextlib.suppress(ValueError):
        return ipaddress.ip_address(text).compressed
    return text
