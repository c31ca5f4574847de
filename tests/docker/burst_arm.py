"""A toy arm for the SYN-burst test, run in the harness-arm image as `python burst_arm.py`.

Its turn makes one real connection attempt to the host, through its network's gateway, at
REAL_PORT (a server the test runs there), then sends BURST connection attempts (SYNs) to other
ports of the gateway as fast as it can: the burst's refusals would flood the kernel log's ring
and, read at the end, erase the record of the real attempt. The raw `_socket` module bypasses
the harness's socket guard, so only the host's firewall and its kernel log see them.

With FLOOD set instead, its turn sends FLOOD DNS queries for one name to its resolver (the
harness's DNS refuser) as fast as it can, without waiting for the answers.
"""

from __future__ import annotations

import _socket
import asyncio
import contextlib
import os
import socket
from collections.abc import AsyncIterator
from pathlib import Path

from arms.arm import Arm
from arms.seam import OpenSession, Turn
from arms.server import main


def _gateway() -> str:
    """Docker gives a network's gateway the first address of its subnet (.1 of a /16 here)."""
    mine = socket.gethostbyname(socket.gethostname()).split(".")
    return ".".join([*mine[:3], "1"])


def _attack(real_port: int, burst: int) -> str:
    gateway = _gateway()
    real = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    real.settimeout(3)
    try:
        real.connect((gateway, real_port))
        said = "connected"
    except OSError as e:
        said = type(e).__name__
    finally:
        real.close()
    sockets = []
    for n in range(burst):
        sock = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
        sock.setblocking(False)
        with contextlib.suppress(OSError):  # EINPROGRESS: the SYN is out
            sock.connect((gateway, 20000 + n))
        sockets.append(sock)
    for sock in sockets:
        sock.close()
    return f"real {gateway}:{real_port} {said}; burst {burst}"


def _query(name: str, ident: int) -> bytes:
    labels = b"".join(bytes([len(p)]) + p.encode() for p in name.split("."))
    return (
        ident.to_bytes(2, "big")
        + b"\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00"
        + labels
        + b"\0\0\x01\0\x01"
    )


def _flood(count: int) -> str:
    conf = Path("/etc/resolv.conf").read_text().splitlines()
    resolver = next(line.split()[1] for line in conf if line.startswith("nameserver"))
    sock = _socket.socket(_socket.AF_INET, _socket.SOCK_DGRAM)
    for n in range(count):
        with contextlib.suppress(OSError):
            sock.sendto(_query("flood.example", n % 65536), (resolver, 53))
    sock.close()
    return f"flooded {resolver} with {count}"


class BurstArm(Arm):
    name = "burst-toy"

    async def open_session(self, session: OpenSession) -> None:
        pass

    async def turn(self, session_id: str, turn: Turn) -> AsyncIterator[str]:
        if os.environ.get("FLOOD"):
            yield await asyncio.to_thread(_flood, int(os.environ["FLOOD"]))
            return
        port, burst = int(os.environ["REAL_PORT"]), int(os.environ["BURST"])
        yield await asyncio.to_thread(_attack, port, burst)


if __name__ == "__main__":
    main(BurstArm)
