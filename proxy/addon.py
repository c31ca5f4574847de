"""The harness mitmproxy addon: attribute, hash and log every call; answer it per the run's mode.

Options are prefixed `harness_` and validated in `configure`, as mitmproxy's own addons do. Record
mode answers from `stubs/` and never sends a byte upstream: plain replies are set in the `request`
hook; streamed or delayed replies are played by `StreamServer` so they really stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog
from mitmproxy import ctx, exceptions, http

from proxy.bodies import BodyStore
from proxy.calllog import CallLog, CallLogError, CallRecord, Outcome, Timing, Tokens
from proxy.masking import DEFAULT_BODY_MASKS, request_hash
from proxy.stream_server import Playback, StreamServer
from proxy.vendors import default_purpose, split_vendor
from stubs.context import StubContext
from stubs.delays import delay_for
from stubs.errors import StubRequestError, error_reply
from stubs.replies import ReplyBook, StubsFileError
from stubs.request import StubReply, StubRequest, Vendor
from stubs.routes import ROUTES, Route, find_route

log = structlog.get_logger("harness.proxy")

PURPOSE_HEADER = "x-harness-purpose"
# Headers the harness adds or an arm sets for the harness; never forwarded, never hashed.
HARNESS_HEADERS = (PURPOSE_HEADER, "x-harness-arm")
STREAM_FIELDS = ("stream", "stream_options")


@dataclass
class CallState:
    vendor: Vendor
    path: str
    method: str
    arm: str
    purpose: str
    start: float
    route: Route | None = None
    body: dict[str, Any] | None = None
    request_hash: str = ""
    request_body: str | None = None
    reply: StubReply | None = None
    played: str | None = None  # the StreamServer path when the reply is played, not set
    outcome: Outcome = "ok"
    error: str | None = None
    flags: list[str] = field(default_factory=list)


class HarnessAddon:
    def __init__(self) -> None:
        self.stream_server = StreamServer()
        self.calls: CallLog | None = None
        self.bodies: BodyStore | None = None
        self.stub_context = StubContext()
        self.masks: tuple[str, ...] = DEFAULT_BODY_MASKS
        self.arm_ports: dict[int, str] = {}
        # Set when the call log cannot be written: from then on every call is refused.
        self.failed: str | None = None
        self._sync_task: asyncio.Task[None] | None = None

    def load(self, loader: Any) -> None:
        loader.add_option("harness_mode", str, "record", "record | live | replay")
        loader.add_option("harness_run_dir", str, "", "Run directory for calls.jsonl and bodies/.")
        loader.add_option("harness_run_id", str, "", "Run id written in every call record.")
        loader.add_option("harness_stubs", str, "", "A stubs TOML file layered on the defaults.")
        loader.add_option("harness_arm", str, "default", "Arm charged for calls on any listener.")
        loader.add_option(
            "harness_arm_ports", Sequence[str], [], "PORT=ARM: calls on listener PORT are ARM's."
        )
        loader.add_option(
            "harness_body_limit", int, 32 * 1024 * 1024, "Largest request body accepted (bytes)."
        )
        loader.add_option(
            "harness_masks", Sequence[str], [], "Extra dotted body paths masked from the hash."
        )
        loader.add_option(
            "harness_sync_interval", float, 0.1, "Seconds between fsyncs of the call log."
        )

    def configure(self, updated: set[str]) -> None:
        opts = ctx.options
        if "harness_mode" in updated and opts.harness_mode != "record":
            raise exceptions.OptionsError(
                f"harness_mode {opts.harness_mode!r} is not available yet; use 'record'"
            )
        if "harness_stubs" in updated:
            try:
                path = Path(opts.harness_stubs) if opts.harness_stubs else None
                self.stub_context = StubContext(book=ReplyBook.load(path))
            except StubsFileError as e:
                raise exceptions.OptionsError(str(e)) from e
        if "harness_arm_ports" in updated:
            ports: dict[int, str] = {}
            for spec in opts.harness_arm_ports:
                port, sep, arm = spec.partition("=")
                if not sep or not port.isdigit() or not arm:
                    raise exceptions.OptionsError(
                        f"harness_arm_ports entry {spec!r} must look like 8081=arm-name"
                    )
                ports[int(port)] = arm
            self.arm_ports = ports
        if "harness_masks" in updated:
            self.masks = (*DEFAULT_BODY_MASKS, *opts.harness_masks)
        if "harness_body_limit" in updated and opts.harness_body_limit <= 0:
            raise exceptions.OptionsError("harness_body_limit must be a positive number of bytes")
        if "harness_run_dir" in updated and opts.harness_run_dir:
            run_dir = Path(opts.harness_run_dir)
            try:
                self.calls = CallLog(run_dir / "calls.jsonl")
                self.bodies = BodyStore(run_dir / "bodies")
            except OSError as e:
                raise exceptions.OptionsError(
                    f"cannot write to run directory {run_dir}: {e.strerror}"
                ) from e

    async def running(self) -> None:
        # Import every stub handler now so the first call does not pay for it.
        for route in ROUTES:
            route.handler()
        await self.stream_server.start()
        self._sync_task = asyncio.create_task(self._sync_loop())

    async def done(self) -> None:
        if self._sync_task:
            self._sync_task.cancel()
        await self.stream_server.stop()
        with contextlib.suppress(CallLogError, OSError):
            self._sync()
        if self.calls:
            self.calls.close()

    async def _sync_loop(self) -> None:
        while True:
            await asyncio.sleep(ctx.options.harness_sync_interval)
            try:
                await asyncio.to_thread(self._sync)
            except (CallLogError, OSError) as e:
                self._fail(f"call log cannot be made durable: {e}")

    def _sync(self) -> None:
        if self.bodies:
            self.bodies.sync()
        if self.calls:
            self.calls.sync()

    def _fail(self, why: str) -> None:
        if not self.failed:
            log.error("proxy stopped serving calls", reason=why)
        self.failed = why

    # --- hooks -------------------------------------------------------------------------------

    async def request(self, flow: http.HTTPFlow) -> None:
        req = flow.request
        headers = {k.lower(): v for k, v in req.headers.items()}
        vendor, path = split_vendor(req.path, req.host_header or "", headers)
        port = flow.client_conn.sockname[1] if flow.client_conn.sockname else 0
        arm = self.arm_ports.get(port, ctx.options.harness_arm)
        state = CallState(
            vendor=vendor,
            path=path,
            method=req.method,
            arm=arm,
            purpose=headers.get(PURPOSE_HEADER, ""),
            start=req.timestamp_end or time.time(),
        )
        flow.metadata["harness"] = state
        for name in HARNESS_HEADERS:
            req.headers.pop(name, None)
        reply = self._answer(state, req.raw_content or b"")
        state.reply = reply
        delay = delay_for(
            self.stub_context.book.stubs.delays, arm, state.purpose, self._route_name(state)
        )
        if not reply.stream and delay.is_noop:
            flow.response = http.Response.make(
                reply.status, reply.body, {"content-type": reply.content_type, **reply.headers}
            )
            return
        state.played = self.stream_server.register(Playback(reply, delay))
        req.scheme, req.host, req.port = "http", "127.0.0.1", self.stream_server.port
        req.method, req.path, req.content = "GET", state.played, b""

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        state = flow.metadata.get("harness")
        if isinstance(state, CallState) and state.played and flow.response:
            flow.response.stream = True

    def response(self, flow: http.HTTPFlow) -> None:
        state = flow.metadata.get("harness")
        if not isinstance(state, CallState) or flow.response is None:
            return
        first_byte = flow.response.timestamp_start
        end = flow.response.timestamp_end or time.time()
        try:
            self._log_call(state, flow.response.status_code, first_byte, end)
        except (CallLogError, OSError) as e:
            self._fail(str(e))
            if not state.played:
                # The reply has not left yet: refuse it rather than serve an unrecorded call.
                refused = error_reply(state.vendor, 503, f"harness proxy: {self.failed}")
                flow.response = http.Response.make(
                    503, refused.body, {"content-type": "application/json"}
                )

    def error(self, flow: http.HTTPFlow) -> None:
        state = flow.metadata.get("harness")
        if not isinstance(state, CallState):
            return
        if state.played:
            self.stream_server.discard(state.played)
        state.outcome = "client_disconnect"
        state.error = str(flow.error) if flow.error else "connection lost"
        state.flags.append("cut")
        status = flow.response.status_code if flow.response else 0
        first_byte = flow.response.timestamp_start if flow.response else None
        try:
            self._log_call(state, status, first_byte, time.time())
        except (CallLogError, OSError) as e:
            self._fail(str(e))

    # --- record mode -------------------------------------------------------------------------

    def _route_name(self, state: CallState) -> str:
        return state.route.name if state.route else f"{state.vendor}:{state.path}"

    def _answer(self, state: CallState, raw: bytes) -> StubReply:
        """The stub's reply, or the vendor's error for a request the vendor would refuse."""
        if self.failed:
            state.outcome = "proxy_error"
            return error_reply(state.vendor, 503, f"harness proxy stopped: {self.failed}")
        state.route = find_route(state.vendor, state.method, state.path)
        state.purpose = state.purpose or default_purpose(self._route_name(state))
        if len(raw) > ctx.options.harness_body_limit:
            state.request_hash = request_hash(state.method, self._route_name(state), None, raw, ())
            state.outcome = "bad_request"
            return error_reply(
                state.vendor,
                413,
                f"Request body is {len(raw)} bytes; the limit is {ctx.options.harness_body_limit}.",
            )
        try:
            state.request_body = self.bodies.put(raw) if (self.bodies and raw) else None
        except OSError as e:
            self._fail(f"cannot store request body: {e}")
            state.outcome = "proxy_error"
            return error_reply(state.vendor, 503, f"harness proxy stopped: {self.failed}")
        body: Any = None
        if raw:
            try:
                body = json.loads(raw)
            except (UnicodeDecodeError, json.JSONDecodeError) as e:
                state.outcome = "bad_request"
                state.request_hash = request_hash(
                    state.method, self._route_name(state), None, raw, ()
                )
                return error_reply(state.vendor, 400, f"The request body is not valid JSON: {e}")
        elif state.method == "GET":
            body = {}
        state.request_hash = request_hash(
            state.method, self._route_name(state), body, raw, self.masks
        )
        if state.route is None:
            state.outcome = "bad_request"
            return error_reply(
                state.vendor, 404, f"Unknown route {state.method} {state.path} for {state.vendor}."
            )
        if not isinstance(body, dict):
            state.outcome = "bad_request"
            return error_reply(state.vendor, 400, "The request body must be a JSON object.")
        state.body = body
        stub_request = StubRequest(
            vendor=state.vendor,
            route=state.route.name,
            body=body,
            # Streamed and plain calls of one request get the same reply, so the stub's choice
            # ignores the stream fields (the request hash keeps them).
            digest=bytes.fromhex(
                request_hash(
                    state.method, state.route.name, body, raw, (*self.masks, *STREAM_FIELDS)
                )
            ),
            purpose=state.purpose,
            arm=state.arm,
        )
        try:
            return state.route.handler()(stub_request, self.stub_context)
        except StubRequestError as e:
            state.outcome = "bad_request"
            return error_reply(state.vendor, e.status, e.message, e.param, e.code)
        except Exception:
            # A stub bug must not take the proxy down or leak a traceback to the arm.
            log.error("stub failed", route=state.route.name, traceback=traceback.format_exc())
            state.outcome = "proxy_error"
            return error_reply(state.vendor, 500, "The harness stub failed on this request.")

    def _log_call(
        self, state: CallState, status: int, first_byte: float | None, end: float
    ) -> None:
        if self.calls is None:
            return
        reply = state.reply
        response_hash = None
        if reply is not None and self.bodies is not None:
            response_hash = self.bodies.put(reply.body)
        usage = reply.usage if reply is not None and reply.status == 200 else None
        body = state.body or {}
        record = CallRecord(
            run_id=ctx.options.harness_run_id,
            seq=self.calls.next_seq(),
            mode="record",
            arm=state.arm,
            purpose=state.purpose,
            vendor=state.vendor,
            route=self._route_name(state),
            method=state.method,
            path=state.path,
            model_requested=body.get("model") if isinstance(body.get("model"), str) else None,
            model_served=reply.model if reply else None,
            stream=bool(reply and reply.stream),
            status=status,
            outcome=state.outcome,
            tokens=Tokens(
                input=usage.input_tokens,
                output=usage.output_tokens,
                cache_read=usage.cache_read_tokens,
                cache_write=usage.cache_write_tokens,
                reasoning=usage.reasoning_tokens,
                source="stub",
            )
            if usage
            else Tokens(),
            request_hash=state.request_hash,
            request_body=state.request_body,
            response_hash=response_hash,
            response_content_type=reply.content_type if reply else None,
            response_chunks=[len(c) for c in reply.chunks] if reply and reply.stream else None,
            timing=Timing(start=state.start, first_byte=first_byte, end=end),
            flags=state.flags,
            error=state.error,
        )
        self.calls.append(record)
