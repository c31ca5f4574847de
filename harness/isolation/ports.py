"""Free TCP ports on 127.0.0.1 for the local backend's listeners and seams."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Awaitable, Callable
from typing import TypeVar

import structlog

from harness.isolation.base import InfraError

log = structlog.get_logger("harness.isolation.ports")
T = TypeVar("T")
PORT_ATTEMPTS = 3  # starts of a process whose port was taken before it bound it


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


def port_taken(error: InfraError) -> bool:
    """The process could not bind a port it was given: Python and asyncio (either case) and
    Node (EADDRINUSE) say so in the log tail the error carries."""
    text = str(error).lower()
    return "address already in use" in text or "eaddrinuse" in text


async def start_on_free_ports(start: Callable[[], Awaitable[T]], what: str) -> T:
    """`start()`, which picks its ports with free_ports and starts a process that binds them,
    done again while the process fails because another took a port in between (seen under load
    for the proxy's listeners and an arm's seam), at most PORT_ATTEMPTS times."""
    for attempt in range(1, PORT_ATTEMPTS + 1):
        try:
            return await start()
        except InfraError as e:
            if not port_taken(e) or attempt == PORT_ATTEMPTS:
                raise
            log.warning("a port was taken before the process bound it; retrying", process=what)
    raise AssertionError("unreachable")
