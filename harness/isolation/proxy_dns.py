"""DNS for the proxy's own traffic (proxy_rules.py): which resolvers it may ask, and the rule
that what it sends them is DNS.

Docker pins every vendor (and ledger) name into the proxy's container, so the docker proxy needs
no DNS and is given none. A local proxy is a host process that looks names up as the host does:
it may send UDP to port 53 of the resolvers /etc/resolv.conf names, nowhere else on port 53 (a
server on port 53 is a server like any other), and only datagrams shaped as a DNS query: a
header with QR = 0, opcode QUERY and one question, checked by the kernel's u32 match on every
datagram to port 53, whatever the conntrack state (a reply makes the flow ESTABLISHED, and what
follows on it would otherwise go unchecked). DNS over TCP is refused: glibc uses it only when a
reply does not fit a datagram, which the vendors' A records always do.
"""

from __future__ import annotations

import contextlib
import ipaddress
import random
from collections.abc import Iterator
from pathlib import Path

DNS_PORT = 53
RESOLV_CONF = Path("/etc/resolv.conf")
# From the UDP header (`0>>22&0x3C@` skips the IP header): byte 8 on is the DNS header. Flags'
# QR and opcode bits (the 5 bits above bit 10 of ID|flags) all 0, and QDCOUNT (bytes 12-13) 1.
# A datagram too short to hold the header matches nothing, so `! --u32` refuses it too.
DNS_QUERY_U32 = "0>>22&0x3C@8>>11&0x1F=0&&0>>22&0x3C@12>>16=1"


def resolvers(conf: Path = RESOLV_CONF) -> tuple[str, ...]:
    """The IPv4 resolvers the host's resolver library asks (its `nameserver` lines), in order.
    IPv6 resolvers are left out: the rule refuses every IPv6 packet of the proxy's."""
    found: list[str] = []
    with contextlib.suppress(OSError):
        for line in conf.read_text(encoding="utf-8", errors="replace").splitlines():
            words = line.split()
            if len(words) >= 2 and words[0] == "nameserver":
                with contextlib.suppress(ValueError):
                    found.append(str(ipaddress.IPv4Address(words[1])))
    return tuple(dict.fromkeys(found))


def not_dns(origin: list[str], comment: list[str], prefix: str) -> list[list[str]]:
    """Every UDP datagram to port 53 not shaped as a DNS query: logged, refused."""
    shape = ["-p", "udp", "--dport", str(DNS_PORT), "-m", "u32", "!", "--u32", DNS_QUERY_U32]
    base = [*origin, *shape, *comment]
    return [[*base, "-j", "LOG", "--log-prefix", prefix], [*base, "-j", "REJECT"]]


def allowed(resolvers: tuple[str, ...]) -> list[list[str]]:
    """The matches of a new datagram to a resolver's port 53 (UDP only)."""
    return [["-d", address, "-p", "udp", "--dport", str(DNS_PORT)] for address in resolvers]


def non_resolvers(resolvers: tuple[str, ...]) -> Iterator[str]:
    """Loopback addresses that are no resolver, in a random order: the start probe's server
    listens on port 53 of one (egress_probe.py); random, so runs starting at once on one host
    rarely pick the same, and the probe takes the next where one is taken."""
    rng = random.SystemRandom()
    while True:
        address = f"127.53.{rng.randrange(256)}.{rng.randrange(1, 255)}"
        if address not in resolvers:
            yield address
