"""Serve an `Arm` over the seam, so a Python arm is one class.

    from arms.arm import Arm
    from arms.server import main

    class Echo(Arm):
        name = "echo"

        async def open_session(self, session: OpenSession) -> None: ...

        async def turn(self, session_id: str, turn: Turn) -> AsyncIterator[str]:
            yield turn.user

    main(Echo)  # `python -m ...`: serves on $SEAM_HOST:$SEAM_PORT

The helper owns everything the seam promises so arms cannot get it wrong: which sessions exist
(404 / 409), body validation (422), one JSON line per delta written as soon as the arm yields it,
the final `done` line with the full text (and the turn context an arm yields as a `TurnAddon`,
for a coupled study: docs/coupled.md), and an `error` line instead of a traceback when the
arm raises (arms/seam_app.py). What an arm implements is `Arm` (arms/arm.py); this module binds,
says it is ready and serves. Starlette + uvicorn: a small, widely used ASGI pair whose server
writes each body chunk straight to the socket, which is what first-token latency measurement
needs.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

import uvicorn

from arms.arm import Arm
from arms.seam import SEAM_VERSION
from arms.seam_app import SeamApp

DEFAULT_PORT = 8700
READY_PREFIX = "seam ready "


def bind(host: str, port: int) -> socket.socket:
    """Bind before serving so port 0 works: the ready line can name the port the OS picked."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted connections inherit it. Without it a reply written in two parts (headers, then
    # body or a stream's line) waits for the client's delayed ACK: about 40 ms per response on
    # a warm connection, measured by the seam probe (harness/run/control/rtt.py).
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((host, port))
    sock.set_inheritable(True)
    return sock


def ready_line(arm: Arm, sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"{READY_PREFIX}http://{shown}:{port} arm={arm.name} seam={SEAM_VERSION}"


def parse_ready_line(line: str) -> str | None:
    """The base URL in a ready line, or None if `line` is not one."""
    if not line.startswith(READY_PREFIX):
        return None
    return line.removeprefix(READY_PREFIX).split()[0]


class _Server(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        # uvicorn re-raises SIGTERM/SIGINT after its graceful shutdown, which kills the process
        # before the arm's `shutdown` hook runs and makes every stop look like a crash. Here a
        # signal only asks the server to stop; the process then exits 0.
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self.handle_exit, sig, None)
        try:
            yield
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)


async def serve_async(
    arm: Arm, host: str, port: int, *, on_ready: Callable[[str], Any] = print
) -> None:
    sock = bind(host, port)
    config = uvicorn.Config(
        SeamApp(arm).app,
        log_level="warning",
        access_log=False,
        # Sessions are long-lived and turns can run for a minute; never drop an idle keep-alive
        # connection between two turns of the orchestrator.
        timeout_keep_alive=300,
        # `docker stop` sends SIGTERM and then waits 10 s: finish or drop in-flight turns first.
        timeout_graceful_shutdown=5,
        lifespan="off",
    )
    server = _Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started and not task.done():
        await asyncio.sleep(0.01)
    if server.started:
        on_ready(ready_line(arm, sock))
    try:
        await task
    finally:
        sock.close()
        await arm.shutdown()


def serve(arm: Arm, host: str = "127.0.0.1", port: int = DEFAULT_PORT) -> None:
    """Run the seam for `arm` until SIGINT/SIGTERM; prints a ready line once it accepts."""

    def announce(line: str) -> None:
        print(line, flush=True)

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve_async(arm, host, port, on_ready=announce))


def main(make_arm: Callable[[], Arm], argv: list[str] | None = None) -> None:
    """`python -m arms.<name>`: flags, then env (SEAM_HOST, SEAM_PORT), then defaults."""
    parser = argparse.ArgumentParser(
        description=f"Serve an arm over the seam (version {SEAM_VERSION})."
    )
    parser.add_argument("--host", default=os.environ.get("SEAM_HOST", "127.0.0.1"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("SEAM_PORT", DEFAULT_PORT)))
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=os.environ.get("ARM_LOG_LEVEL", "INFO"),
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    serve(make_arm(), args.host, args.port)
