"""`python -m harness.isolation.dns_refuser CONFIG.json`: the arms' only DNS server, which
answers every query REFUSED and logs the name that was asked for.

Why: on an `--internal` network Docker's embedded resolver (127.0.0.11) does not forward names
it does not know, and answers without a trace (the arm sees "Temporary failure in name
resolution", the harness nothing), so a lookup of an outside host by code the Python socket
guard does not cover (C libraries, `_socket`, another language) was invisible. The docker
backend therefore gives every arm a resolv.conf naming the proxy's address on its network, and
this process, in the proxy container, listens there on UDP 53.

A query is attributed to the arm whose network it arrived on (the local address it was sent
to), never to anything the packet says; each is one line in the proxy's egress folder, which no
arm mounts: {"schema", "arm", "destination": NAME, "query_type", "time", "source": "dns"}.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import socket
import struct
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

DNS_PORT = 53
RCVBUF = 8 * 1024 * 1024
REFUSED = 5
_QUERY_TYPES = {1: "A", 28: "AAAA", 5: "CNAME", 15: "MX", 16: "TXT", 33: "SRV", 12: "PTR"}


def question(packet: bytes) -> tuple[str, str] | None:
    """(name, type) of a query's first question, or None if the packet is not a query."""
    if len(packet) < 12 or packet[2] & 0x80:  # too short, or a response
        return None
    labels, at = [], 12
    while at < len(packet) and packet[at]:
        size = packet[at]
        if size & 0xC0:  # compression pointers do not belong in a question
            return None
        labels.append(packet[at + 1 : at + 1 + size].decode("ascii", "replace"))
        at += 1 + size
    if at + 5 > len(packet):
        return None
    (kind,) = struct.unpack("!H", packet[at + 1 : at + 3])
    return ".".join(labels)[:255], _QUERY_TYPES.get(kind, str(kind))


def refusal(packet: bytes) -> bytes:
    """The query sent back as a response (QR set, RCODE REFUSED, no answers), question kept."""
    flags = struct.unpack("!H", packet[2:4])[0]
    flags = 0x8000 | (flags & 0x7900) | REFUSED  # QR, keep opcode and RD
    return packet[:2] + struct.pack("!H", flags) + packet[4:12] + packet[12:512]


class Refuser(asyncio.DatagramProtocol):
    def __init__(self, arm: str, log_path: Path) -> None:
        self.arm = arm
        self.log_path = log_path
        self.transport: asyncio.DatagramTransport | None = None
        self.fd: int | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.DatagramTransport, transport)
        sock = transport.get_extra_info("socket")
        if sock is not None:  # room for a burst (the kernel caps it at net.core.rmem_max)
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RCVBUF)

    def datagram_received(self, data: bytes, addr: tuple[str | Any, int]) -> None:
        asked = question(data)
        name, kind = asked if asked else ("?", "malformed")
        entry = {
            "schema": 1,
            "arm": self.arm,
            "destination": name,
            "query_type": kind,
            "time": datetime.now(UTC).isoformat(timespec="milliseconds"),
            "source": "dns",
        }
        # One O_APPEND write per line, so concurrent lines never interleave; written before
        # the answer leaves, so a refusal the arm saw is always in the log. The file stays open:
        # opening it per query made a flood outrun the socket's buffer sooner (what is lost
        # still shows: the firewall counts every query, harness/isolation/kernel_log.py).
        if self.fd is None:
            self.fd = os.open(self.log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.write(self.fd, (json.dumps(entry) + "\n").encode())
        if asked and self.transport is not None:
            self.transport.sendto(refusal(data), addr)


async def serve(config: dict[str, Any]) -> None:
    loop = asyncio.get_running_loop()
    log_path = Path(config["dns"]["log"])
    port = int(config["dns"].get("port", DNS_PORT))
    for arm, host in config["arm_hosts"].items():
        await loop.create_datagram_endpoint(
            functools.partial(Refuser, arm, log_path), local_addr=(host, port)
        )
    print("harness dns refuser ready", flush=True)
    await asyncio.Event().wait()


def main() -> None:
    config_path = Path(sys.argv[1])
    asyncio.run(serve(json.loads(config_path.read_text())))


if __name__ == "__main__":
    main()
