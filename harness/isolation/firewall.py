"""The host firewall both backends use: iptables and ip6tables, a run's rules found by their
comment, the firewall's own counters, and what the rules caught in the kernel log. The rules
themselves: the docker backend's arms (docker/arm_rules.py, which says why rules on the host at
all) and the proxy's own traffic, under either backend (proxy_rules.py).

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

# iptables --log-prefix takes at most 29 characters.
_PREFIX_MAX = 29
_KERNEL_LINE = re.compile(r"^(?P<time>\S+)\s+(?P<prefix>harness \S+ \S+) (?P<rest>.*)$")
TOOLS = ("iptables", "ip6tables")
NOT_THE_HOSTS_OWN = ["-m", "conntrack", "!", "--ctstate", "ESTABLISHED,RELATED"]


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


def run_tool(tool: str, args: Sequence[str]) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            [tool, "-w", "10", *args], capture_output=True, text=True, check=False, timeout=30
        )
    except FileNotFoundError as e:
        raise RulesError(f"{tool} is not installed (apt-get install -y iptables)") from e


def has_chain(tool: str, chain: str) -> bool:
    with contextlib.suppress(RulesError):
        return run_tool(tool, ["-S", chain]).returncode == 0
    return False


def remove_where(wanted: Callable[[str], bool], chain: Callable[[str], bool] = bool) -> int:
    """Delete every rule (both families, every chain `chain` accepts) whose comment `wanted`
    accepts."""
    removed = 0
    for tool in TOOLS:
        try:
            listing = run_tool(tool, ["-S"]).stdout
        except RulesError:
            continue
        for line in listing.splitlines():
            words = shlex.split(line)
            if words[:1] != ["-A"] or "--comment" not in words or not chain(words[1]):
                continue
            if wanted(words[words.index("--comment") + 1]):
                with contextlib.suppress(RulesError):
                    if run_tool(tool, ["-D", *words[1:]]).returncode == 0:
                        removed += 1
    return removed


def rule_counts(run_id: str) -> dict[str, int]:
    """{log prefix: packets its LOG rules saw} for the run's rules, from the firewall's own
    counters (both families, every chain): the number of refused packets whatever the kernel
    log kept, the cross-check of what egress.jsonl names."""
    counts: dict[str, int] = {}
    for tool in TOOLS:
        try:
            listing = run_tool(tool, ["-S", "-v"]).stdout
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
        for line in run_tool("iptables", ["-S", "-v"]).stdout.splitlines():
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
