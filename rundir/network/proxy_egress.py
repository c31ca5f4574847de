"""`proxy_egress.jsonl`: every connection the proxy itself tried outside its rule, one line per
attempt, in time order: the arms' `egress.jsonl`, for the proxy.

The proxy may open only TCP to the addresses its vendor hosts resolved to on their ports
(HTTPS, 443, for the real vendors), and on the local backend DNS queries to the host's
resolvers (the docker proxy has no DNS: its names are pinned); in record and replay mode it has
no upstream at all, so nothing (the host's connections to its control channel and the arms' to
its listeners are theirs, not its). The firewall refuses everything else from the proxy's own
network (docker) or cgroup (local) and logs it to the kernel log
(harness/isolation/proxy_rules.py); each line is one refused packet (the start probe's,
harness/isolation/egress_probe.py, are not written):

- `kind: "refused"`: a connection to anything else;
- `kind: "https_unresolved"`: an HTTPS connection (port 443) to an address no vendor host
  resolved to, refused too, and named apart since it is what a proxy talking to an unexpected
  host through TLS would look like.

A run whose file holds any line fails, naming the destinations (run.json `proxy_refused`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from rundir.model import RunDirModel
from rundir.network.egress import read_entries, write_egress

PROXY_EGRESS_SCHEMA: Literal[1] = 1
PROXY_EGRESS_FILE = "proxy_egress.jsonl"

ProxyEgressKind = Literal["refused", "https_unresolved"]


class ProxyEgressEntry(RunDirModel):
    schema_: Literal[1] = Field(PROXY_EGRESS_SCHEMA, alias="schema")
    destination: str  # host:port (IPv6 in brackets), or an address for a port-less protocol
    time: str  # ISO 8601, real time, from the kernel log
    kind: ProxyEgressKind
    protocol: str  # tcp, udp, icmp, ...
    source: Literal["kernel"] = "kernel"
    interface: str | None = None  # the proxy network's bridge the packet arrived on
    claimed_source: str | None = None  # the packet's source address


def write_proxy_egress(path: Path, entries: list[ProxyEgressEntry]) -> None:
    write_egress(path, entries)


def read_proxy_egress(path: Path) -> list[ProxyEgressEntry]:
    """Every entry of a run's proxy_egress.jsonl (none when the file is missing), validated."""
    return read_entries(path, ProxyEgressEntry, "a proxy egress entry")


def by_destination(entries: list[ProxyEgressEntry]) -> dict[str, int]:
    """{"<destination> (<kind>)": attempts}, as run.json and the summary name them."""
    counts: dict[str, int] = {}
    for entry in entries:
        key = f"{entry.destination} ({entry.kind})"
        counts[key] = counts.get(key, 0) + 1
    return counts
