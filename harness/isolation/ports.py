"""Free TCP ports on 127.0.0.1 for the local backend's listeners and seams."""

from __future__ import annotations

import contextlib
import socket


def free_ports(count: int) -> list[int]:
    """`count` distinct free ports. The listeners per arm must be known before the proxy starts
    so the port -> arm map can be given to it. All are held open together while the OS picks
    (one at a time, it may hand the same port out twice); another process may still take one
    before the proxy binds it, which start_proxy retries."""
    with contextlib.ExitStack() as stack:
        socks = [stack.enter_context(socket.socket()) for _ in range(count)]
        for sock in socks:
            sock.bind(("127.0.0.1", 0))
        return [int(sock.getsockname()[1]) for sock in socks]


def free_port() -> int:
    return free_ports(1)[0]
