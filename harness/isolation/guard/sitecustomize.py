"""Socket guard for arms run by the local backend; Python imports it at start-up (site.py).

The local backend puts this directory first on an arm's PYTHONPATH and lists what the arm may
reach in HARNESS_GUARD_ALLOW ("127.0.0.1:PORT,..." : its proxy listener and its own seam). Any
other TCP connection, by address or by name, is refused inside the arm (ConnectionRefusedError)
and appended to HARNESS_EGRESS_LOG as {"schema", "arm", "destination", "time", "pid"}.

A raw socket (AF_PACKET, or SOCK_RAW in any family) is refused the same way (PermissionError)
and logged with kind "raw_socket": with one an arm writes frames no connect() ever sees.

The log is the arm's own (a folder only it writes): the harness attributes every line in it to
this arm whatever the line says, so the guard is evidence of what the arm tried, never of what
another arm did.

It is a guard, not a sandbox: code that calls the C library directly or a non-Python arm is not
covered (the docker backend's networks are). The run header says which isolation a run had.

Also: libfaketime 0.9.10 breaks Python >= 3.11's time.sleep (clock_nanosleep with TIMER_ABSTIME
on the monotonic clock gets a faked, negative time: EINVAL; libfaketime issue #426), so when it is
preloaded, time.sleep waits with select() on a relative timeout instead.
"""

from __future__ import annotations

import errno
import ipaddress
import json
import os
import socket
import sys
import time
from datetime import UTC, datetime
from typing import Any

_LOCAL_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}


def _parse_allow(spec: str) -> set[tuple[str, int]]:
    allowed: set[tuple[str, int]] = set()
    for entry in filter(None, (e.strip() for e in spec.split(","))):
        host, _, port = entry.rpartition(":")
        allowed.add((host.strip("[]"), int(port)))
    return allowed


def _canonical(host: str) -> str:
    """Loopback spelled any way (localhost, ::1, 127.0.0.1) compares as 127.0.0.1."""
    if host in _LOCAL_NAMES:
        return "127.0.0.1"
    try:
        ip = ipaddress.ip_address(host.split("%")[0])
    except ValueError:
        return host
    return "127.0.0.1" if ip.is_loopback else str(ip)


def _install(arm: str, allowed: set[tuple[str, int]], log_path: str) -> None:
    allowed = {(_canonical(h), p) for h, p in allowed}

    def record(destination: str, kind: str = "connect") -> None:
        line = json.dumps(
            {
                "schema": 1,
                "arm": arm,
                "destination": destination,
                "time": datetime.now(UTC).isoformat(timespec="milliseconds"),
                "pid": os.getpid(),
                "kind": kind,
            }
        )
        # One O_APPEND write per line: lines from several processes never interleave.
        fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, (line + "\n").encode())
        finally:
            os.close(fd)
        print(f"harness socket guard: refused {destination} (arm {arm})", file=sys.stderr)

    def refuse(destination: str) -> ConnectionRefusedError:
        record(destination)
        return ConnectionRefusedError(
            errno.ECONNREFUSED, f"harness socket guard: {destination} is not reachable from arm"
        )

    def check(sock: socket.socket, address: Any) -> None:
        if sock.family not in (socket.AF_INET, socket.AF_INET6):
            return  # unix sockets and socketpairs are local IPC, not egress
        host, port = str(address[0]), int(address[1])
        if (_canonical(host), port) not in allowed:
            raise refuse(f"{host}:{port}")

    real_init = socket.socket.__init__

    def init(
        self: socket.socket, family: Any = -1, type: Any = -1, proto: Any = -1, fileno: Any = None
    ) -> None:
        # A socket made from an inherited descriptor (fileno) was checked when it was made.
        if fileno is None and _is_raw(int(family), int(type)):
            what = "AF_PACKET" if int(family) == _AF_PACKET else "SOCK_RAW"
            record(f"raw socket ({what})", kind="raw_socket")
            raise PermissionError(errno.EPERM, "harness socket guard: raw sockets are refused")
        real_init(self, family, type, proto, fileno)

    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex
    real_getaddrinfo = socket.getaddrinfo

    def connect(self: socket.socket, address: Any) -> None:
        check(self, address)
        real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        try:
            check(self, address)
        except ConnectionRefusedError:
            return errno.ECONNREFUSED
        return real_connect_ex(self, address)

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        # A name other than loopback is egress intent even before a connect: name it in the log
        # (the connect would only show an address) and do not let it reach a resolver.
        name = host.decode() if isinstance(host, bytes) else host
        if name is not None and _canonical(str(name)) == str(name) and not _is_ip(str(name)):
            raise refuse(f"{name}:{port}")
        return real_getaddrinfo(host, port, *args, **kwargs)

    socket.socket.__init__ = init  # type: ignore[method-assign]
    socket.socket.connect = connect  # type: ignore[method-assign,assignment]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign,assignment]
    socket.getaddrinfo = getaddrinfo


_AF_PACKET = getattr(socket, "AF_PACKET", 17)


def _is_raw(family: int, kind: int) -> bool:
    # The type may carry SOCK_NONBLOCK / SOCK_CLOEXEC flags above the low bits.
    return family == _AF_PACKET or (kind != -1 and kind & 0xF == socket.SOCK_RAW)


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host.split("%")[0])
    except ValueError:
        return False
    return True


def _fix_faketime_sleep() -> None:
    import select

    def sleep(seconds: float) -> None:
        if seconds < 0:
            raise ValueError("sleep length must be non-negative")
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            select.select([], [], [], left)

    time.sleep = sleep  # type: ignore[assignment]


if os.environ.get("HARNESS_GUARD_ALLOW") is not None:
    _install(
        os.environ.get("HARNESS_GUARD_ARM", "unknown"),
        _parse_allow(os.environ["HARNESS_GUARD_ALLOW"]),
        os.environ.get("HARNESS_EGRESS_LOG", "egress.jsonl"),
    )
if "libfaketime" in os.environ.get("LD_PRELOAD", ""):
    _fix_faketime_sleep()
