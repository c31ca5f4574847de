"""The seam's HTTP routes around one `Arm` (Starlette): which sessions exist (404 / 409), body
validation (422), one JSON line per delta written as soon as the arm yields it, the final `done`
line with the full text (and a `TurnAddon`'s context), an `error` line instead of a traceback
when the arm raises, and a turn or an ingestion cancelled when the orchestrator goes away."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, AsyncIterator
from typing import TypeVar

import anyio
from pydantic import BaseModel, ValidationError
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from arms.arm import Arm, TurnAddon
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
