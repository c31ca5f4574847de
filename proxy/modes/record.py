"""Record mode: answer every call from `stubs/`, never sending a byte upstream.

Plain replies are set in the `request` hook. Streamed or delayed replies are played by the
in-process `StreamServer`, because mitmproxy sends an addon-made response as one body.
"""

from __future__ import annotations

import traceback

import structlog
from mitmproxy import http

from proxy.flow import CallState, stub_digest
from proxy.modes.base import LocalMode, ModeName
from proxy.modes.stream_server import Playback, StreamServer
from stubs.request import StubRequest
from stubs.routes import stub_handler
from stubs.rules import StubContext, delay_for
from vendors.errors import VendorRequestError, error_reply
from vendors.reply import VendorReply
from vendors.routes import ROUTES

log = structlog.get_logger("harness.proxy")


class RecordMode(LocalMode):
    name: ModeName = "record"

    def __init__(self, stub_context: StubContext, stream_server: StreamServer) -> None:
        self.stub_context = stub_context
        self.stream_server = stream_server

    def warm(self) -> None:
        """Import every stub handler now so the first call does not pay for it."""
        for route in ROUTES:
            stub_handler(route)

    async def respond(self, flow: http.HTTPFlow, state: CallState) -> VendorReply:
        return self.answer(state)

    def answer(self, state: CallState) -> VendorReply:
        """The stub's reply for a request that passed intake."""
        assert state.route is not None and state.body is not None
        stub_request = StubRequest(
            vendor=state.vendor,
            route=state.route.name,
            body=state.sent if state.sent is not None else state.body,  # as live would send it
            digest=stub_digest(state),
            purpose=state.purpose,
            arm=state.arm,
        )
        try:
            return stub_handler(state.route)(stub_request, self.stub_context)
        except VendorRequestError as e:
            state.outcome = "bad_request"
            return error_reply(state.vendor, e.status, e.message, e.param, e.code)
        except Exception:
            # A stub bug must not take the proxy down or leak a traceback to the arm.
            log.error("stub failed", route=state.route.name, traceback=traceback.format_exc())
            state.outcome = "proxy_error"
            return error_reply(state.vendor, 500, "The harness stub failed on this request.")

    def send(self, flow: http.HTTPFlow, state: CallState, reply: VendorReply) -> None:
        """Answer now, or hand the reply to the stream server when it must stream or wait."""
        state.reply = reply
        delay = delay_for(
            self.stub_context.book.stubs.delays, state.arm, state.purpose, state.route_name
        )
        if not reply.stream and delay.is_noop:
            flow.response = http.Response.make(
                reply.status, reply.body, {"content-type": reply.content_type, **reply.headers}
            )
            return
        cut = delay.cut_after_chunks
        if cut is not None and (reply.stream or cut < len(reply.chunks)):
            state.outcome = "upstream_cut"  # a stub of a vendor whose stream breaks
        state.played = self.stream_server.register(Playback(reply, delay))
        req = flow.request
        req.scheme, req.host, req.port = "http", "127.0.0.1", self.stream_server.port
        req.method, req.path, req.content = "GET", state.played, b""
