"""A fake Anthropic + OpenAI server for live-mode tests: the stand-in for the internet.

    with FakeVendor(tls=True) as fv:
        fv.script(["status=529", None, "cut_after=3"])   # for requests without a header
        client = anthropic.Anthropic(base_url=fv.url, api_key="k",
                                     http_client=httpx2.Client(verify=fv.ssl_context()))
        ...
        fv.requests                # what arrived: method, path, headers (keys), parsed body
        fv.wait_idle()             # served records, once no reply is in flight (a client can
                                   # finish reading before the fake has booked its last write)
        fv.wait_for_disconnect(5)  # a client that left mid-reply

It runs on its own thread with its own asyncio loop, so sync SDK clients in the test, async ones
on the test's loop, and a proxy subprocess can all reach it at once. It answers with the
record-mode stubs' exact wire formats and misbehaves per request (see `behaviour.py`): chosen by
an `x-fake-behaviour` header, else by the next entry of the script, else normal.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import ssl
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from pathlib import Path
from types import TracebackType

from stubs.routes import stub_handler
from stubs.rules.context import StubContext
from tests.fakevendor.behaviour import Behaviour, BehaviourError, as_behaviour
from tests.fakevendor.certs import CertFiles, make_certs
from tests.fakevendor.connection import Connection
from tests.fakevendor.records import (
    Disconnect,
    ObservedState,
    Outcome,
    ReceivedRequest,
    Served,
)
from tests.fakevendor.replies import Event
from vendors.routes import ROUTES
from vendors.tokens import estimate_tokens

_START_TIMEOUT = 10.0


def count_tokens_default(text: str) -> int:
    """The fake's count of output text: the stubs' own estimate (about 4 characters a token),
    so a complete reply's count agrees with the usage the stubs report."""
    return estimate_tokens(text)


class FakeVendor:
    def __init__(
        self,
        tls: bool = False,
        *,
        count_tokens: Callable[[str], int] = count_tokens_default,
        api_keys: dict[str, str] | None = None,
        stub_context: StubContext | None = None,
    ) -> None:
        """`api_keys` ({"anthropic": ..., "openai": ...}): when given, a request with another key
        gets the vendor's 401. `count_tokens` counts output text sent when no usage was sent."""
        self.tls = tls
        self.count_tokens = count_tokens
        self.api_keys = dict(api_keys or {})
        self.ctx = stub_context or StubContext()
        self.host = "127.0.0.1"
        self.port = 0
        self._cond = threading.Condition()
        self._state = ObservedState()
        self._script: deque[Behaviour] = deque()
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._certs: CertFiles | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    # -- lifecycle -----------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The base URL, without a path: OpenAI clients need `fv.url + "/v1"`."""
        return f"{'https' if self.tls else 'http'}://{self.host}:{self.port}"

    @property
    def ca_file(self) -> Path:
        """PEM of the CA that signed the server certificate (tls=True only)."""
        if self._certs is None:
            raise RuntimeError("FakeVendor(tls=False) has no CA file; start it with tls=True")
        return self._certs.ca_file

    def ssl_context(self) -> ssl.SSLContext:
        """A client context that trusts only this fake's CA."""
        return ssl.create_default_context(cafile=str(self.ca_file))

    def start(self) -> FakeVendor:
        if self._thread is not None:
            raise RuntimeError("FakeVendor already started")
        for route in ROUTES:
            stub_handler(route)  # import every stub now: a first import inside a call is slow
        if self.tls:
            self._tmp = tempfile.TemporaryDirectory(prefix="fakevendor-")
            self._certs = make_certs(Path(self._tmp.name))
        self._thread = threading.Thread(target=self._run, name="fakevendor", daemon=True)
        self._thread.start()
        if not self._ready.wait(_START_TIMEOUT):
            raise RuntimeError("FakeVendor did not start listening in time")
        if self._error is not None:
            raise RuntimeError(f"FakeVendor failed to start: {self._error}") from self._error
        return self

    def stop(self) -> None:
        if self._thread is None:
            return
        if self._loop is not None and self._stop is not None:
            with contextlib.suppress(RuntimeError):  # the loop already ended
                self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(_START_TIMEOUT)
        self._thread = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> FakeVendor:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as e:  # reported by start(); nothing else can see this thread
            self._error = e
            self._ready.set()

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        tasks: set[asyncio.Task[None]] = set()

        async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            task = asyncio.current_task()
            assert task is not None
            tasks.add(task)
            try:
                await Connection(self, reader, writer).serve()
            except asyncio.CancelledError:
                pass  # shutting down: asyncio's stream callback would log a cancelled handler
            finally:
                tasks.discard(task)

        server = await asyncio.start_server(
            on_connect, self.host, 0, ssl=self._server_ssl(), limit=1 << 20
        )
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        async with server:
            await self._stop.wait()
            server.close()
            for task in list(tasks):
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    def _server_ssl(self) -> ssl.SSLContext | None:
        if self._certs is None:
            return None
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(self._certs.cert_file, self._certs.key_file)
        context.set_alpn_protocols(["http/1.1"])
        return context

    # -- the test's controls -------------------------------------------------------------------

    def script(self, behaviours: Iterable[str | Behaviour | None]) -> None:
        """Queue behaviours for the next requests that carry no `x-fake-behaviour` header, one
        each in order (None or "" is a normal reply). Appends to what is still queued."""
        parsed = [as_behaviour(b) for b in behaviours]  # a typo fails here, in the test
        with self._cond:
            self._script.extend(parsed)

    def reset(self) -> None:
        """Forget requests, served records, disconnects and the script (between tests)."""
        with self._cond:
            self._state = ObservedState(counter=self._state.counter)
            self._script.clear()

    # -- observation ---------------------------------------------------------------------------

    @property
    def requests(self) -> list[ReceivedRequest]:
        with self._cond:
            return list(self._state.requests)

    @property
    def served(self) -> list[Served]:
        """One record per answered request, in arrival order (copies: they do not update)."""
        with self._cond:
            return [copy.copy(s) for s in self._state.served.values()]

    def served_for(self, request_id: str) -> Served:
        with self._cond:
            return copy.copy(self._state.served[request_id])

    @property
    def disconnects(self) -> list[Disconnect]:
        with self._cond:
            return list(self._state.disconnects)

    def wait_for_disconnect(
        self, timeout: float = 5.0, request_id: str | None = None
    ) -> Disconnect:
        """The first client disconnect (of `request_id`, if given); TimeoutError if none comes."""

        def found() -> Disconnect | None:
            for d in self._state.disconnects:
                if request_id is None or d.request_id == request_id:
                    return d
            return None

        with self._cond:
            if not self._cond.wait_for(lambda: found() is not None, timeout):
                raise TimeoutError(f"no client disconnect within {timeout} s")
            result = found()
            assert result is not None
            return result

    def wait_for_requests(self, count: int, timeout: float = 5.0) -> list[ReceivedRequest]:
        with self._cond:
            if not self._cond.wait_for(lambda: len(self._state.requests) >= count, timeout):
                raise TimeoutError(
                    f"{len(self._state.requests)} requests within {timeout} s, wanted {count}"
                )
            return list(self._state.requests)

    def wait_idle(self, timeout: float = 5.0) -> list[Served]:
        """Wait until no reply is in flight (stalls and trickles end only when the client
        leaves), then return the served records."""
        with self._cond:
            if not self._cond.wait_for(
                lambda: all(s.outcome != "in_flight" for s in self._state.served.values()),
                timeout,
            ):
                raise TimeoutError(f"a reply was still in flight after {timeout} s")
            return [copy.copy(s) for s in self._state.served.values()]

    # -- the Observer protocol, called from the server's thread ---------------------------------

    def admit(self, header: str | None) -> tuple[str, Behaviour | BehaviourError]:
        with self._cond:
            self._state.counter += 1
            request_id = f"req-{self._state.counter}"
            if header is not None:
                try:
                    return request_id, as_behaviour(header)
                except BehaviourError as e:
                    return request_id, e
            return request_id, self._script.popleft() if self._script else Behaviour()

    def record_request(self, request: ReceivedRequest) -> None:
        with self._cond:
            self._state.requests.append(request)
            self._cond.notify_all()

    def open_served(self, served: Served) -> None:
        with self._cond:
            self._state.served[served.request_id] = served

    def sent(self, served: Served, event: Event, nbytes: int) -> None:
        with self._cond:
            served.events_sent += 1
            served.bytes_sent += nbytes
            served.text_sent += event.text
            if event.final_output_tokens is not None:
                served.usage_sent = True
                served.output_tokens = event.final_output_tokens
            elif not served.usage_sent:
                served.output_tokens = self.count_tokens(served.text_sent)

    def close_served(self, served: Served, outcome: Outcome) -> None:
        now = time.monotonic()
        with self._cond:
            served.outcome = outcome
            served.ended = now
            current = self._state.served.get(served.request_id) is served
            # A reply from before reset() that ends now belongs to an earlier test: not reported.
            if outcome == "disconnected" and current:
                self._state.disconnects.append(
                    Disconnect(served.request_id, time.time(), now, served.events_sent)
                )
            self._cond.notify_all()
