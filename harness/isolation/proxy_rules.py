"""The OS rule on the proxy's own traffic (docker backend): the proxy may open only TCP to the
addresses its vendor hosts resolved to on their ports (no DNS: the names are pinned);
everything else it starts is refused and logged, and the run fails when the log holds anything
(rundir/network/proxy_egress.py).

Why: arms reach only their proxy, but a proxy (a bug, a hostile dependency, a vendor SDK quirk)
could open any connection, and the keys are in it. The arms' rules (docker/arm_rules.py) match the
arm networks' bridges; these match the proxy's own network, `<prefix>-ctl`, the only one it
reaches the host or the outside through (on the arm networks it only answers). Only the proxy
sits on that network, so every new connection arriving from its bridge is the proxy's. Replies
to the host's own connections (the control channel, which the host opens) are let through by
conntrack state, as for the arms.

The vendor hosts are resolved here, on the host, when the rules are made, and pinned into the
proxy container (`--add-host`), so the proxy connects to exactly the addresses the rules allow.
The docker proxy needs no DNS and gets none; a local proxy (LocalProxyRules) may send DNS
queries to the host's resolvers only (proxy_dns.py). Record and replay mode have no upstream:
nothing is allowed, not even DNS. A live run's
postgresql:// ledger, which the proxy books at itself, is allowed on its TCP addresses (pinned
the same way); one a container cannot reach (the host's loopback, a Unix socket) is refused
before the run starts (docker_ledger_targets).

Per rule family and chain, first to last (INPUT: to the host itself; DOCKER-USER: forwarded):
  UDP to port 53 that is no DNS query  -> LOG `harness <run> :proxy `, REJECT (any state)
  allowed (vendor address:port, a     -> ACCEPT in INPUT, RETURN in DOCKER-USER (Docker's own
   local proxy's resolvers' UDP 53)      rules then forward it as before)
  TCP to port 443 anywhere else       -> LOG `harness <run> :proxy443 `, REJECT
  anything else new                   -> LOG `harness <run> :proxy `, REJECT
IPv6: every packet from the bridge is logged and refused (the proxy runs with IPv6 off and no
capability, so none should exist). The prefixes start with ':' so no arm name can collide.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from harness.isolation import firewall, proxy_dns
from rundir.network import PROXY_EGRESS_FILE, ProxyEgressEntry, by_destination, write_proxy_egress
from vendors.hosts import DEFAULT_UPSTREAMS

HTTPS_PORT = 443
LOOPBACK = "127.0.0.1"
POSTGRES_PORT = 5432


@dataclass(frozen=True)
class Target:
    host: str  # as the vendor URL names it
    address: str  # an IPv4 address it resolved to
    port: int


def vendor_targets(upstreams: Sequence[str], live: bool) -> tuple[list[Target], list[str]]:
    """(every vendor host's resolved IPv4 addresses and port, hosts that did not resolve).
    `upstreams` are the study's `VENDOR=URL` overrides of the default vendor URLs."""
    if not live:
        return [], []
    urls: dict[str, str] = {str(k): v for k, v in DEFAULT_UPSTREAMS.items()}
    for item in upstreams:
        vendor, _, url = item.partition("=")
        urls[vendor] = url
    targets: list[Target] = []
    unresolved: list[str] = []
    for url in urls.values():
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port or (HTTPS_PORT if parts.scheme == "https" else 80)
        addresses = _resolve(host, port)
        if not addresses:
            unresolved.append(host)
        targets += [Target(host, address, port) for address in addresses]
    return sorted(set(targets), key=lambda t: (t.host, t.address, t.port)), unresolved


def ledger_targets(ledger_url: str) -> tuple[list[Target], list[str]]:
    """(the addresses of a live run's postgresql:// ledger, hosts that did not resolve): the
    proxy books every call there itself. A host given as a socket directory (or none: libpq's
    default socket) is no TCP, so nothing to allow."""
    parts = urlsplit(ledger_url)
    query = dict(pair.partition("=")[::2] for pair in parts.query.split("&") if pair)
    netloc = parts.netloc.rsplit("@", 1)[-1]
    hosts = [h for h in query.get("host", "").split(",") if h] or [
        h for h in netloc.split(",") if h
    ]
    targets: list[Target] = []
    unresolved: list[str] = []
    for item in hosts:
        host, port = _host_port(item, query.get("port", ""))
        if not host or host.startswith("/"):
            continue
        addresses = _resolve(host, port)
        if not addresses:
            unresolved.append(host)
        targets += [Target(host, address, port) for address in addresses]
    return targets, unresolved


def docker_ledger_targets(ledger_url: str) -> list[Target]:
    """The TCP addresses a docker proxy books at for its postgresql:// ledger: the URL as the
    harness gives it (unchanged, no rewriting: the harness on the host uses the same URL).
    Raises LedgerUnreachableError, in one line, where a container could not reach it: the
    host's loopback (127.0.0.1 in the container is the container), a Unix socket (not mounted
    in), or a host that does not resolve to an IPv4 address (the rule allows IPv4 only)."""
    targets, unresolved = ledger_targets(ledger_url)
    if unresolved:
        raise LedgerUnreachableError(
            f"its host {', '.join(unresolved)} does not resolve to an IPv4 address"
        )
    if not targets:
        raise LedgerUnreachableError(
            "it names no TCP host (a Unix socket, or libpq's default one), which the proxy's "
            "container cannot reach"
        )
    for t in targets:
        if ipaddress.IPv4Address(t.address).is_loopback:
            raise LedgerUnreachableError(
                f"its host {t.host}{'' if t.host == t.address else ' (' + t.address + ')'} "
                "is the host's loopback, which in the proxy's "
                "container is the container's own: name the host by an address the container "
                "reaches (the host's LAN address, or the docker bridge's gateway) and let "
                "PostgreSQL listen there"
            )
    return targets


class LedgerUnreachableError(ValueError):
    """A docker live run's PostgreSQL ledger its proxy's container could not reach."""


def _host_port(item: str, port: str) -> tuple[str, int]:
    if item.startswith("["):  # [IPv6]:port: refused by the rule anyway, kept for the message
        host, _, rest = item[1:].partition("]")
        port = rest.removeprefix(":") or port
    else:
        host, _, after = item.partition(":")
        port = after or port
    return host, int(port) if port.isdigit() else POSTGRES_PORT


def _resolve(host: str, port: int) -> list[str]:
    try:
        return [str(ipaddress.IPv4Address(host))]
    except ValueError:
        pass
    try:
        found = socket.getaddrinfo(host, port, socket.AF_INET, socket.SOCK_STREAM)
    except OSError:
        return []
    return sorted({str(info[4][0]) for info in found})


def add_host_flags(targets: list[Target]) -> list[str]:
    """`docker run` flags pinning each vendor host name to the addresses the rules allow."""
    flags: list[str] = []
    for target in targets:
        try:
            ipaddress.ip_address(target.host)
        except ValueError:
            flags += ["--add-host", f"{target.host}:{target.address}"]
    return _dedupe_pairs(flags)


def _dedupe_pairs(flags: list[str]) -> list[str]:
    pairs = list(dict.fromkeys(zip(flags[::2], flags[1::2], strict=True)))
    return [word for pair in pairs for word in pair]


def prefixes(run_id: str) -> dict[str, str]:
    """{kernel log prefix: the kind of refusal its lines are}."""
    tag = firewall.run_tag(run_id)
    return {f"harness {tag} :proxy443 ": "https_unresolved", f"harness {tag} :proxy ": "refused"}


@dataclass(frozen=True)
class ProxyRules:
    bridge: str  # the proxy network's host interface
    targets: tuple[Target, ...]
    resolvers: tuple[str, ...]  # where the proxy may send DNS queries: none for docker's
    run_id: str
    comment: str

    def specs(self, tool: str) -> list[tuple[str, list[str]]]:
        forward = "DOCKER-USER" if tool == "iptables" or _has_chain(tool) else "FORWARD"
        rules: list[tuple[str, list[str]]] = []
        for chain in ("INPUT", forward):
            let_through = "ACCEPT" if chain == "INPUT" else "RETURN"
            rules += _chain(chain, tool, ["-i", self.bridge], let_through, self)
        return rules


@dataclass(frozen=True)
class LocalProxyRules:
    """The same rule for a proxy that is a host process (the local backend, as root): matched
    on the cgroup (v2) the proxy was started in, in OUTPUT, where its packets leave."""

    cgroup: str  # the proxy's cgroup, relative to the cgroup2 root
    targets: tuple[Target, ...]
    resolvers: tuple[str, ...]  # live mode: the host's resolvers (proxy_dns.py)
    run_id: str
    comment: str
    # The proxy's own servers on 127.0.0.1 it connects to (the stub stream server, which record
    # and replay mode route streamed replies to): those ports only, not the host's loopback.
    loopback_ports: tuple[int, ...] = ()

    def specs(self, tool: str) -> list[tuple[str, list[str]]]:
        return _chain("OUTPUT", tool, ["-m", "cgroup", "--path", self.cgroup], "ACCEPT", self)


def _chain(
    chain: str, tool: str, origin: list[str], let_through: str, rule: ProxyRules | LocalProxyRules
) -> list[tuple[str, list[str]]]:
    """One chain's rules, first to last: what is allowed, HTTPS elsewhere, everything else."""
    comment = ["-m", "comment", "--comment", rule.comment]
    https, other = prefixes(rule.run_id)
    if tool == "ip6tables":  # no IPv6 of the proxy's is expected: every packet is refused
        base = [*origin, *comment]
        return [
            (chain, [*base, "-j", "LOG", "--log-prefix", other]),
            (chain, [*base, "-j", "REJECT"]),
        ]
    new = [*origin, "-m", "conntrack", "!", "--ctstate", "ESTABLISHED,RELATED"]
    # Only DNS queries to port 53, whatever the state (proxy_dns.py).
    shape = proxy_dns.not_dns(origin, comment, other) if rule.resolvers else []
    allowed = proxy_dns.allowed(rule.resolvers)
    allowed += [["-d", t.address, "-p", "tcp", "--dport", str(t.port)] for t in rule.targets]
    if isinstance(rule, LocalProxyRules):  # in a container its own loopback never meets these
        allowed += [
            ["-o", "lo", "-d", LOOPBACK, "-p", "tcp", "--dport", str(port)]
            for port in rule.loopback_ports
        ]
    rules = [(chain, spec) for spec in shape]
    rules += [(chain, [*new, *match, *comment, "-j", let_through]) for match in allowed]
    tls = [*new, "-p", "tcp", "--dport", str(HTTPS_PORT), *comment]
    rules.append((chain, [*tls, "-j", "LOG", "--log-prefix", https]))
    rules.append((chain, [*tls, "-j", "REJECT"]))
    rules.append((chain, [*new, *comment, "-j", "LOG", "--log-prefix", other]))
    rules.append((chain, [*new, *comment, "-j", "REJECT"]))
    return rules


def _has_chain(tool: str) -> bool:
    return firewall.has_chain(tool, "DOCKER-USER")


def add_rules(rules: ProxyRules | LocalProxyRules) -> None:
    """Install both families before the proxy starts; fail closed (RulesError)."""
    for tool in firewall.TOOLS:
        for chain, spec in reversed(rules.specs(tool)):
            proc = firewall.run_tool(tool, ["-I", chain, "1", *spec])
            if proc.returncode != 0:
                raise firewall.RulesError(f"{tool} -I {chain} failed: {proc.stderr.strip()}")


def refusals(run_id: str, kernel_log: Path, skip: int = 0) -> list[ProxyEgressEntry]:
    """The proxy's refused packets in the run's kernel log (the follower's file), but the
    first `skip` (the start probe's, egress_probe.py)."""
    kinds = prefixes(run_id)
    try:
        lines = kernel_log.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        lines = []
    found = firewall.kernel_attempts(kinds, [x for x in lines if not x.startswith("#")])
    return [
        ProxyEgressEntry.model_validate(
            {
                "destination": entry["destination"],
                "time": entry["time"],
                "kind": entry["arm"],  # kernel_attempts names the prefix's owner: here a kind
                "protocol": entry["protocol"],
                "interface": entry["interface"],
                "claimed_source": entry["claimed_source"],
            }
        )
        for entry in found[skip:]
    ]


def uncounted(run_id: str, logged: int, counts: Mapping[str, int] | None = None) -> int:
    """Packets the proxy's LOG rules counted beyond the lines the kernel log kept (a burst can
    outrun the follower): evidence, so the run fails on them too."""
    counts = firewall.rule_counts(run_id) if counts is None else counts
    counted = sum(packets for prefix, packets in counts.items() if prefix in prefixes(run_id))
    return max(0, counted - logged)


def confine(
    bridge: str,
    upstreams: Sequence[str],
    *,
    live: bool,
    run_id: str,
    comment: str,
    ledger_url: str = "",
) -> tuple[str, list[str]]:
    """Install the rule on the proxy's network `bridge` before the proxy starts. Returns what
    run.json says of it and the `--add-host` flags that pin the vendor (and ledger) hosts for
    the proxy."""
    rules, said = docker_rules(
        bridge, upstreams, live=live, run_id=run_id, comment=comment, ledger_url=ledger_url
    )
    add_rules(rules)
    return said, add_host_flags(list(rules.targets))


def docker_rules(
    bridge: str,
    upstreams: Sequence[str],
    *,
    live: bool,
    run_id: str,
    comment: str,
    ledger_url: str = "",
) -> tuple[ProxyRules, str]:
    """The docker proxy's rule and what run.json says of it. A live run's postgresql:// ledger
    is booked by the proxy itself: its TCP addresses are allowed too (LedgerUnreachableError
    where a container could not reach it)."""
    targets, unresolved = vendor_targets(upstreams, live)
    ledger = docker_ledger_targets(ledger_url) if live and ledger_url else []
    targets += [t for t in ledger if t not in targets]
    allowed = ", ".join(
        f"{'ledger ' if t in ledger else ''}{t.host}={t.address}:{t.port}" for t in targets
    )
    said = f"enforced: the proxy may open TCP to {allowed or 'nothing'}"
    said += " (no DNS: the names are pinned)" if live else ""
    if unresolved:
        said += f" (did not resolve: {', '.join(unresolved)})"
    return ProxyRules(bridge, tuple(targets), (), run_id, comment), said


def collect(run_dir: Path, run_id: str, kernel_log: Path, skip: int = 0) -> dict[str, int]:
    """Write the run's proxy_egress.jsonl from the kernel log; returns what was refused, by
    destination and kind, the packets the kernel log lost included (the run fails on any).
    The first `skip` lines are the start probe's: not written, but counted as logged."""
    found = refusals(run_id, kernel_log, skip)
    write_proxy_egress(run_dir / PROXY_EGRESS_FILE, found)
    refused = by_destination(found)
    lost = uncounted(run_id, len(found) + skip)
    if lost:
        refused["(refused packets the kernel log lost)"] = lost
    return refused
