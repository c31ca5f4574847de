"""The orchestrator's side of the seam: `SeamClient`.

    async with SeamClient("http://127.0.0.1:8700") as arm:
        await arm.health()
        await arm.open_session(OpenSession(session_id="s1", item_id="i1", clock=clock))
        async with arm.turn("s1", Turn(...)) as stream:
            async for line in stream:
                ...
        stream.text, stream.timing.first_token_s, stream.timing.last_token_s

The wall deadline belongs to the caller: wrap the `async with` in `asyncio.timeout(...)`; when it
fires, leaving the block closes the connection (which cancels the arm's work) and `stream.text`
still holds what arrived. `collect()` does exactly that and returns a `TurnResult`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from types import TracebackType
from typing import Literal

import httpx
from pydantic import ValidationError

from arms.seam import (
    SEAM_VERSION,
    SEAM_VERSIONS,
    STREAM_LINE,
    Delta,
    Done,
    Error,
    Health,
    Ingest,
    Ingested,
    LineSplitter,
    OpenSession,
    Problem,
    Turn,
)


class SeamError(RuntimeError):
    """The arm refused a request or broke the protocol. `status` is the HTTP status if any."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class TurnTiming:
    """Monotonic timestamps (time.monotonic()) of one turn, and latencies derived from them."""

    sent: float  # just before the request was sent
    first_token: float | None = None  # when the first text arrived
    last_token: float | None = None  # when the last text arrived
    ended: float | None = None  # when the stream ended, was cut, or failed

    @property
    def first_token_s(self) -> float | None:
        return None if self.first_token is None else self.first_token - self.sent

    @property
    def last_token_s(self) -> float | None:
        return None if self.last_token is None else self.last_token - self.sent


Outcome = Literal["done", "error", "cut", "broken"]


@dataclass
class TurnStream:
    """A turn in flight: iterate it for parsed lines; `text` and `timing` fill in as it goes."""

    response: httpx.Response
    timing: TurnTiming
    text: str = ""
    outcome: Outcome | None = None  # None while the stream is still open
    error: str | None = None
    lines: list[Delta | Done | Error] = field(default_factory=list)
    addon: str | None = None  # the turn context the done line returned (a coupled study's)

    async def __aiter__(self) -> AsyncIterator[Delta | Done | Error]:
        try:
            async for raw in self._raw_lines():
                now = time.monotonic()
                if not raw.strip():
                    continue
                line = self._parse(raw)
                self.lines.append(line)
                self._note(line, now)
                yield line
                if self.outcome is not None:
                    return
        except httpx.HTTPError as exc:
            self._fail("broken", f"the arm's stream broke: {type(exc).__name__}: {exc}")
            raise SeamError(self.error or "") from exc
        if self.outcome is None:
            self._fail("broken", "the arm's stream ended without a done or error line")
            raise SeamError(self.error or "")

    async def _raw_lines(self) -> AsyncIterator[str]:
        # Framed at "\n" only (arms/seam.py): httpx's aiter_lines() splits like
        # str.splitlines(), so a reply holding U+2028 came apart into two halves that are no JSON.
        splitter = LineSplitter()
        async for piece in self.response.aiter_text():
            for raw in splitter.feed(piece):
                yield raw
        for raw in splitter.end():
            yield raw

    def _parse(self, raw: str) -> Delta | Done | Error:
        try:
            return STREAM_LINE.validate_json(raw)
        except ValidationError as exc:
            self._fail("broken", f"the arm sent a line that is not seam v{SEAM_VERSION}: {raw!r}")
            raise SeamError(self.error or "") from exc

    def _note(self, line: Delta | Done | Error, now: float) -> None:
        if isinstance(line, Delta) and line.text:
            self.text += line.text
            if self.timing.first_token is None:
                self.timing.first_token = now
            self.timing.last_token = now
        elif isinstance(line, Done):
            # An arm that does not stream sends its whole reply in `done`: that arrival is both
            # its first and its last token.
            if line.text and self.timing.first_token is None:
                self.timing.first_token = self.timing.last_token = now
            self.text = line.text or self.text
            self.addon = line.addon
            self.outcome, self.timing.ended = "done", now
        elif isinstance(line, Error):
            self.outcome, self.error, self.timing.ended = "error", line.message, now

    def _fail(self, outcome: Outcome, message: str) -> None:
        self.outcome, self.error = outcome, message
        self.timing.ended = time.monotonic()


@dataclass
class TurnResult:
    text: str  # the full reply, or the part received before a cut or failure
    outcome: Outcome
    error: str | None
    timing: TurnTiming
    addon: str | None = None  # the turn context the arm returned with `done`, if any


@dataclass
class IngestResult:
    outcome: Outcome
    error: str | None
    stored: int | None
    sent: float  # monotonic
    ended: float = field(default_factory=time.monotonic)

    @property
    def seconds(self) -> float:
        return self.ended - self.sent


class SeamClient:
    def __init__(self, base_url: str, *, timeout: float = 30.0) -> None:
        # trust_env=False: the seam is a direct line to the arm. An HTTP(S)_PROXY meant for
        # vendor traffic must never carry orchestrator requests through the metering proxy.
        self.http = httpx.AsyncClient(
            base_url=base_url.rstrip("/"), timeout=timeout, trust_env=False
        )

    async def __aenter__(self) -> SeamClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self.http.aclose()

    async def health(self) -> Health:
        response = await self.http.get("/health")
        health = Health.model_validate(_json(response))
        if health.seam not in SEAM_VERSIONS:
            raise SeamError(
                f"arm {health.arm!r} speaks seam {health.seam}; this harness speaks "
                f"{', '.join(map(str, SEAM_VERSIONS))}: rebuild the arm's image against this "
                "harness"
            )
        return health

    async def ingest(
        self, session_id: str, ingest: Ingest, deadline_s: float | None = None
    ) -> IngestResult:
        """Send one history session (seam v2) and wait for the arm to take it in, at most
        `deadline_s` wall seconds; past it the connection is closed (which stops the arm's work)
        and the result is `cut`. A refusal is an `error` result, a broken connection raises."""
        sent = time.monotonic()
        try:
            async with asyncio.timeout(deadline_s):
                response = await self.http.post(
                    f"/sessions/{session_id}/ingest",
                    content=ingest.model_dump_json(),
                    headers={"content-type": "application/json"},
                    timeout=httpx.Timeout(self.http.timeout.connect, read=None),
                )
        except TimeoutError:
            return IngestResult("cut", "the ingestion was stopped at its deadline", None, sent)
        try:
            stored = Ingested.model_validate(_json(response)).stored
        except SeamError as e:
            return IngestResult("error", str(e), None, sent)
        except ValidationError as e:
            return IngestResult("broken", f"not a seam v2 ingest reply: {e}", None, sent)
        return IngestResult("done", None, stored, sent)

    async def open_session(self, session: OpenSession) -> None:
        response = await self.http.post("/sessions", content=session.model_dump_json())
        _json(response)

    async def close_session(self, session_id: str) -> None:
        _json(await self.http.delete(f"/sessions/{session_id}"))

    @asynccontextmanager
    async def turn(self, session_id: str, turn: Turn) -> AsyncIterator[TurnStream]:
        """Send a turn; yields a `TurnStream` once the arm accepted it (status 200).

        No read timeout: how long a turn may take is the caller's deadline, not httpx's.
        """
        request = self.http.build_request(
            "POST",
            f"/sessions/{session_id}/turns",
            # exclude_none: `addon_from` goes only to coupled studies' arms, so an arm that
            # refuses unknown fields (the Node helper) runs every other study as before.
            content=turn.model_dump_json(exclude_none=True),
            headers={"content-type": "application/json"},
            timeout=httpx.Timeout(self.http.timeout.connect, read=None),
        )
        timing = TurnTiming(sent=time.monotonic())
        response = await self.http.send(request, stream=True)
        try:
            if response.status_code != 200:
                await response.aread()
                _json(response)
            stream = TurnStream(response, timing)
            try:
                yield stream
            finally:
                if stream.outcome is None:
                    stream._fail("cut", "the turn was stopped before the arm finished")
        finally:
            await response.aclose()

    async def collect(
        self, session_id: str, turn: Turn, deadline_s: float | None = None
    ) -> TurnResult:
        """Run a turn to its end or until `deadline_s` (wall seconds from sending) passes."""
        stream: TurnStream | None = None
        try:
            async with asyncio.timeout(deadline_s), self.turn(session_id, turn) as stream:
                async for _ in stream:
                    pass
        except TimeoutError:
            if stream is None:
                raise SeamError(f"the arm did not accept the turn within {deadline_s} s") from None
        except SeamError:
            if stream is None:
                raise
        return TurnResult(
            stream.text, stream.outcome or "cut", stream.error, stream.timing, stream.addon
        )


def _json(response: httpx.Response) -> object:
    """The response's JSON, or a SeamError that carries the arm's own explanation."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if response.is_success and body is not None:
        return body
    try:
        message = Problem.model_validate(body).message
    except ValidationError:
        message = response.text[:500] or response.reason_phrase
    raise SeamError(
        f"{response.request.method} {response.request.url.path} -> {response.status_code}: "
        f"{message}",
        status=response.status_code,
    )
