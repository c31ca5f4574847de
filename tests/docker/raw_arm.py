"""A root arm with raw sockets, for tests/docker/test_isolation.py (`python raw_arm.py`).

Arm "prober": its turn waits for targets.json in its working directory (the test writes it once
the run's containers exist), then, each attempt reported in its answer:
- `guard raw`: socket.socket(AF_PACKET, SOCK_RAW), which the harness's socket guard sees;
- `v6 udp`: a hand-made Ethernet + IPv6 + UDP frame through _socket (past the guard) to the
  host bridge's fe80:: link-local address, where the test's UDP server listens on `::`;
- `forged udp`: an IPv4 UDP packet with a forged source address (IP_HDRINCL) to the test's
  UDP server on the host, through the arm network's gateway;
- `dns`: a lookup of an outside name through _socket (past the guard);
- `forge guard line`: a line in its own guard log naming the arm "other".
Without NET_RAW (the harness's default) the raw sockets fail with PermissionError; with NET_RAW
given back (`cap_add`) the frames leave and only the host's rules can stop them.
"""

from __future__ import annotations

import _socket
import asyncio
import json
import os
import socket
import struct
import time
from collections.abc import AsyncIterator
from pathlib import Path

from arms.arm import Arm
from arms.seam import OpenSession, Turn
from arms.server import main

ETH_P_IPV6 = 0x86DD
FORGED_V4 = "10.123.45.67"
FORGED_V6 = "fe80::dead:beef"


def _checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def _v6_udp_frame(dst_mac: str, dst_ip: str, port: int) -> bytes:
    src_mac = Path("/sys/class/net/eth0/address").read_text().strip()
    src = socket.inet_pton(socket.AF_INET6, FORGED_V6)
    dst = socket.inet_pton(socket.AF_INET6, dst_ip)
    payload = b"hello over ipv6"
    length = 8 + len(payload)
    pseudo = src + dst + struct.pack("!I3xB", length, 17)
    header = struct.pack("!HHHH", 40000, port, length, 0)
    udp = struct.pack("!HHHH", 40000, port, length, _checksum(pseudo + header + payload))
    ipv6 = struct.pack("!IHBB", 6 << 28, length, 17, 64) + src + dst
    eth = bytes.fromhex(dst_mac.replace(":", "")) + bytes.fromhex(src_mac.replace(":", ""))
    return eth + struct.pack("!H", ETH_P_IPV6) + ipv6 + udp + payload


def _v4_forged_udp(dst_ip: str, port: int) -> bytes:
    payload = b"hello from nowhere"
    udp = struct.pack("!HHHH", 40001, port, 8 + len(payload), 0) + payload  # checksum optional
    src, dst = socket.inet_aton(FORGED_V4), socket.inet_aton(dst_ip)
    header = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 1, 0, 64, 17, 0, src, dst)
    header = header[:10] + struct.pack("!H", _checksum(header)) + header[12:]
    return header + udp


def _attempt(action: object) -> str:
    try:
        action()  # type: ignore[operator]
        return "sent"
    except OSError as e:
        return f"failed: {type(e).__name__}: {e}"


def _probe(targets: dict[str, object]) -> dict[str, str]:
    results: dict[str, str] = {}
    results["guard raw"] = _attempt(
        lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW).close()
    )
    mac, ll, port6 = targets["v6"]  # type: ignore[misc]

    def send_v6() -> None:
        sock = _socket.socket(_socket.AF_PACKET, _socket.SOCK_RAW)
        try:
            sock.bind(("eth0", ETH_P_IPV6))
            for _ in range(3):
                sock.send(_v6_udp_frame(mac, ll, port6))
        finally:
            sock.close()

    results["v6 udp"] = _attempt(send_v6)
    gateway, port4 = targets["udp"]  # type: ignore[misc]

    def send_forged() -> None:
        sock = _socket.socket(_socket.AF_INET, _socket.SOCK_RAW, _socket.IPPROTO_RAW)
        try:
            for _ in range(3):
                sock.sendto(_v4_forged_udp(gateway, port4), (gateway, 0))
        finally:
            sock.close()

    results["forged udp"] = _attempt(send_forged)
    try:  # past the guard (which would refuse the name itself): the container's resolver
        _socket.getaddrinfo("exfiltrate.example", 443)
        results["dns"] = "resolved"
    except OSError as e:
        results["dns"] = f"failed: {e}"
    line = {"schema": 1, "arm": "other", "destination": "blame.example:443", "time": "2024"}
    with open(os.environ["HARNESS_EGRESS_LOG"], "a") as log:
        log.write(json.dumps(line) + "\n")
    results["forge guard line"] = "written"
    # Also in its log: a run halted mid-turn keeps no answer, and the test reads the results.
    print("raw arm results " + json.dumps(results), flush=True)
    time.sleep(1)  # the frames reach the host and its kernel log before the turn ends
    return results


class RawArm(Arm):
    name = "raw-toy"

    async def open_session(self, session: OpenSession) -> None:
        pass

    async def turn(self, session_id: str, turn: Turn) -> AsyncIterator[str]:
        if os.environ.get("HARNESS_ARM") != "prober":
            yield "quiet"
            return
        targets_file = Path("targets.json")
        deadline = time.monotonic() + 60
        while not targets_file.exists() and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
        targets = json.loads(targets_file.read_text())
        yield json.dumps(await asyncio.to_thread(_probe, targets))


if __name__ == "__main__":
    main(RawArm)
