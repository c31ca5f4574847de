"""Serve an `Arm` over the seam, so a Python arm is one class.

    class Echo(Arm):
        name = "echo"

        async def open_session(self, session: OpenSession) -> None: ...

        async def turn(self, session_id: str, turn: Turn) -> AsyncIterator[str]:
            yield turn.user

    serve(Echo(), "127.0.0.1", 8700)

The helper owns everything the seam promises so arms cannot get it wrong: which sessions exist
(404 / 409), body validation (422), one JSON line per delta written as soon as the arm yields it,
the final `done` line with the full text (and the turn context an arm yields as a `TurnAddon`,
for a coupled study: docs/coupled.md), and an `error` line instead of a traceback when the
arm raises. Starlette + uvicorn: a small, widely used ASGI pair whose server writes each body
chunk straight to the socket, which is what first-token latency measurement needs.
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
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

import anyio
import uvicorn
from pydantic import BaseModel, ValidationError
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from arms.seam import (
    NDJSON,
    SEAM_VERSION,
    Delta,
    Done,
    Error,
    Health,
    Ingest,
    Ingested,
    OpenSession,
    Problem,
    SessionRef,
    Turn,
    stream_line,
)

log = logging.getLogger("arms.server")

DEFAULT_PORT = 8700
READY_PREFIX = "seam ready "
# The folder the harness gives an arm for its memory (seam v2): snapshotted after a history is
# ingested, copied afresh for each question.
STATE_DIR_ENV = "ARM_STATE_DIR"


@dataclass(frozen=True)
class TurnAddon:
    """Yield one from `Arm.turn` to return the turn context this turn used (a coupled study's
    source arm): it is not streamed; it goes with the final `done` line as its `addon`."""

    text: str


def state_folder() -> str | None:
    """$ARM_STATE_DIR, made if missing, or None when the harness gave none."""
    chosen = os.environ.get(STATE_DIR_ENV, "").strip()
    if not chosen:
        return None
    os.makedirs(chosen, exist_ok=True)
    return chosen


class Arm(ABC):
    """One arm. Subclasses set `name` and implement `open_session` and `turn`; an arm with a
    memory implements `ingest` (seam v2) and, when all of it lives in one folder, sets
    `state_dir` to that folder (see `state_folder`)."""

    name: ClassVar[str]
    state_dir: str | None = None

    @abstractmethod
    async def open_session(self, session: OpenSession) -> None:
        """Prepare state for a new conversation. The helper has checked the id is new."""

    @abstractmethod
    def turn(self, session_id: str, turn: Turn) -> AsyncIterator[str | TurnAddon]:
        """Yield the reply as text deltas (write it as `async def ... yield`), and at most one
        `TurnAddon` (a coupled study's source arm: the turn context it used).

        If the orchestrator cuts the turn at its deadline the generator is cancelled at its
        current `await`; put bookkeeping that must happen anyway in a `finally`.
        """

    async def close_session(self, session_id: str) -> None:  # noqa: B027 - optional hook
        """Drop the session's state. Default: nothing to drop."""

    async def ingest(self, session_id: str, ingest: Ingest) -> int:
        """Take one history session into the session's memory (seam v2); return how many
        memories were kept. Default: refused (501), so a memory benchmark never runs an arm
        that silently keeps nothing; an arm that keeps nothing on purpose returns 0."""
        raise NotImplementedError(f"arm {self.name!r} does not ingest history (seam v2)")

    async def shutdown(self) -> None:  # noqa: B027 - optional hook
        """Release clients and connections when the server stops. Default: nothing."""


def _problem(status: int, error: str, message: str) -> JSONResponse:
    body = Problem.model_validate({"error": error, "message": message})
    return JSONResponse(body.model_dump(), status_code=status)


M = TypeVar("M", bound=BaseModel)


async def _parse(request: Request, model: type[M]) -> M | JSONResponse:
    raw = await request.body()
    try:
        return model.model_validate_json(raw)
    except ValidationError as exc:
        fields = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'body'}: {err['msg']}"
            for err in exc.errors(include_url=False)
        )
        return _problem(422, "bad_request", f"invalid {model.__name__} body: {fields}")


class _TurnStream(Response):
    """Streams a turn and cancels the arm's work when the client goes away.

    Starlette's StreamingResponse only notices a disconnect when it next writes, so an arm that
    hangs without yielding would keep running after the orchestrator cut the turn. Here the
    stream races a disconnect listener, and whichever ends first cancels the other.
    """

    media_type = NDJSON

    def __init__(self, lines: AsyncGenerator[bytes, None]) -> None:
        self.lines = lines
        self.status_code = 200
        self.background = None
        # Caches and proxies in between must not hold lines back.
        self.init_headers({"cache-control": "no-store", "x-accel-buffering": "no"})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async with anyio.create_task_group() as group:

            async def stream() -> None:
                await send(
                    {"type": "http.response.start", "status": 200, "headers": self.raw_headers}
                )
                async for chunk in self.lines:
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                await send({"type": "http.response.body", "body": b"", "more_body": False})
                group.cancel_scope.cancel()

            async def watch() -> None:
                while (await receive())["type"] != "http.disconnect":
                    pass
                group.cancel_scope.cancel()

            group.start_soon(stream)
            group.start_soon(watch)
        # If the cut landed while a line was being sent, the generator (and the arm's turn
        # inside it) is parked at a `yield`: close it now, outside the cancelled scope, so
        # the arm's `finally` blocks run before the next turn rather than at garbage collection.
        await self.lines.aclose()


class SeamApp:
    """The seam's routes around one `Arm` instance."""

    def __init__(self, arm: Arm) -> None:
        self.arm = arm
        self.sessions: dict[str, OpenSession] = {}
        # Turns of one session run one after another: a cut turn's cancellation finishes
        # before the next turn touches the same conversation state.
        self.locks: dict[str, asyncio.Lock] = {}
        self.app = Starlette(
            routes=[
                Route("/health", self.health, methods=["GET"]),
                Route("/sessions", self.open_session, methods=["POST"]),
                Route("/sessions/{session_id}/turns", self.turn, methods=["POST"]),
                Route("/sessions/{session_id}/ingest", self.ingest, methods=["POST"]),
                Route("/sessions/{session_id}", self.close_session, methods=["DELETE"]),
            ],
            exception_handlers={HTTPException: self._http_error, Exception: self._crash},
        )

    async def _http_error(self, request: Request, exc: Exception) -> Response:
        # Unknown paths and methods get the same JSON shape as every other refusal.
        status = exc.status_code if isinstance(exc, HTTPException) else 404
        error = "bad_method" if status == 405 else "not_found"
        return _problem(status, error, f"{request.method} {request.url.path}: {exc}")

    async def _crash(self, request: Request, exc: Exception) -> Response:
        # Never a traceback in a body: the orchestrator logs bodies into the run directory.
        log.error("%s %s failed", request.method, request.url.path, exc_info=exc)
        return _problem(500, "arm_failed", f"{self.arm.name}: {_describe(exc)}")

    async def health(self, request: Request) -> Response:
        health = Health(seam=SEAM_VERSION, arm=self.arm.name, state_dir=self.arm.state_dir)
        return JSONResponse(health.model_dump())

    async def open_session(self, request: Request) -> Response:
        session = await _parse(request, OpenSession)
        if isinstance(session, JSONResponse):
            return session
        if session.session_id in self.sessions:
            return _problem(
                409,
                "duplicate_session",
                f"session {session.session_id!r} is already open; DELETE it first or use a new id",
            )
        self.sessions[session.session_id] = session
        self.locks[session.session_id] = asyncio.Lock()
        try:
            await self.arm.open_session(session)
        except Exception as exc:
            # Forget the id so the orchestrator's retry of the same session can succeed.
            del self.sessions[session.session_id], self.locks[session.session_id]
            log.exception("open_session failed")
            return _problem(500, "arm_failed", f"{self.arm.name}.open_session: {_describe(exc)}")
        return JSONResponse(SessionRef(session_id=session.session_id).model_dump(), 201)

    def _unknown(self, session_id: str) -> JSONResponse:
        return _problem(
            404, "unknown_session", f"no session {session_id!r} is open; POST /sessions first"
        )

    async def turn(self, request: Request) -> Response:
        session_id = request.path_params["session_id"]
        if session_id not in self.sessions:
            return self._unknown(session_id)
        turn = await _parse(request, Turn)
        if isinstance(turn, JSONResponse):
            return turn
        # The lock is taken from the table now: a DELETE racing this turn must not break it.
        return _TurnStream(self._lines(session_id, turn, self.locks[session_id]))

    async def _lines(
        self, session_id: str, turn: Turn, lock: asyncio.Lock
    ) -> AsyncGenerator[bytes, None]:
        parts: list[str] = []
        addon: str | None = None
        reply: AsyncIterator[str | TurnAddon] | None = None
        async with lock:
            try:
                reply = self.arm.turn(session_id, turn)
                async for text in reply:
                    if isinstance(text, TurnAddon):
                        if addon is not None:
                            raise TypeError("turn() yielded a second TurnAddon; yield one")
                        addon = text.text
                        continue
                    if not isinstance(text, str):
                        raise TypeError(f"turn() yielded {type(text).__name__}, expected str")
                    if text:  # an empty delta would count as a first token that carried nothing
                        parts.append(text)
                        yield stream_line(Delta(text=text))
            except Exception as exc:
                # The traceback goes to the arm's log; the stream gets a one-line message.
                log.exception("turn %s of session %s failed", turn.turn, session_id)
                yield stream_line(Error(message=_describe(exc)))
                return
            finally:
                aclose = getattr(reply, "aclose", None)
                if aclose is not None:
                    await aclose()
        yield stream_line(Done(text="".join(parts), addon=addon))

    async def ingest(self, request: Request) -> Response:
        session_id = request.path_params["session_id"]
        if session_id not in self.sessions:
            return self._unknown(session_id)
        ingest = await _parse(request, Ingest)
        if isinstance(ingest, JSONResponse):
            return ingest
        async with self.locks[session_id]:
            work = asyncio.ensure_future(self.arm.ingest(session_id, ingest))
            # The orchestrator's deadline closes the connection: the arm's work stops with it,
            # so a cut ingestion's calls do not run on into the next one's time.
            while not work.done():
                await asyncio.wait({work}, timeout=0.2)
                if not work.done() and await request.is_disconnected():
                    work.cancel()
                    with contextlib.suppress(asyncio.CancelledError, Exception):
                        await work
                    return _problem(500, "arm_failed", "the ingestion was stopped")
            try:
                stored = work.result()
            except NotImplementedError as exc:
                return _problem(501, "not_implemented", str(exc))
            except Exception as exc:
                log.exception("ingesting %s into session %s failed", ingest.session_id, session_id)
                return _problem(500, "arm_failed", f"{self.arm.name}.ingest: {_describe(exc)}")
        body = Ingested(session_id=ingest.session_id, stored=max(0, int(stored or 0)))
        return JSONResponse(body.model_dump())

    async def close_session(self, request: Request) -> Response:
        session_id = request.path_params["session_id"]
        if session_id not in self.sessions:
            return self._unknown(session_id)
        del self.sessions[session_id], self.locks[session_id]
        await self.arm.close_session(session_id)
        return JSONResponse(SessionRef(session_id=session_id).model_dump())


def _describe(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def bind(host: str, port: int) -> socket.socket:
    """Bind before serving so port 0 works: the ready line can name the port the OS picked."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Accepted connections inherit it. Without it a reply written in two parts (headers, then
    # body or a stream's line) waits for the client's delayed ACK: about 40 ms per response on
    # a warm connection, measured by the seam probe (harness/run/rtt.py).
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
