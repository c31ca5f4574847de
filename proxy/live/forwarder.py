"""Live forwarding: forward each call to its vendor with the study's key, metered and capped.

Per call (its sampling fields already pinned, in every mode alike: proxy.flow.sampling): price
the model (an unknown model is refused, never free), reserve the worst case against the run's
budget (refused past the cap), note the reservation durably, forward with the study's key, tap
the stream for usage, and settle on every path: success, vendor error, cut stream, deadline,
client disconnect, shutdown.
"""

from __future__ import annotations

import asyncio
from typing import Any

import structlog
from mitmproxy import ctx, http

from proxy.flow import CallState
from proxy.live.call import KEY_ENV, LiveCall, LiveConfig
from proxy.live.read_coalesce import install as coalesce_reads
from proxy.live.reserve import price_and_reserve
from proxy.live.settle import book
from proxy.live.upstream import Upstream, point_upstream

# Re-exported (__all__): tests compute the bounds as the proxy does.
from proxy.metering import (
    STREAM_ROUTES,
    MeteredUsage,
    StreamMeter,
    input_bound,
    max_output,
    model_from_body,
    usage_from_body,
)
from proxy.redact import UNDECODABLE, SecretRedactor, StreamCleaner, redact_head, redact_plain
from rundir.calls import DecodeError
from vendors.errors import error_reply
from vendors.reply import VendorReply

__all__ = ["KEY_ENV", "LiveCall", "LiveConfig", "MeteredForwarder", "input_bound", "max_output"]

log = structlog.get_logger("harness.proxy")

# Routes the vendors do not bill: forwarded without a reservation.
FREE_ROUTES = frozenset({"anthropic.models", "openai.models", "anthropic.count_tokens"})


class MeteredForwarder:
    """Forwards each call to its vendor with the study's key, reserved against the cap, its
    reply metered and redacted, and settles it on every path. Not a `Mode` itself: the live
    Mode (proxy.modes.live.LiveMode) drives it and sends its refusals."""

    def __init__(self, config: LiveConfig) -> None:
        self.config = config
        self.inflight: dict[int, tuple[http.HTTPFlow, CallState]] = {}
        # Set when a call was billed at a tier the table cannot price: later calls are refused.
        self.halted: str | None = None
        # Every study key, whichever vendor it is for: an upstream may quote any of them.
        self.redactor = SecretRedactor({KEY_ENV[v]: k for v, k in config.keys.items()})
        # Parsed once, with the parts every call reads (SplitResult's `hostname` and `port`
        # parse the netloc again on each read): every call is pointed at one of these.
        self.upstreams = {vendor: Upstream(url) for vendor, url in config.upstreams.items()}
        # A reply's chunks that arrived in one read are relayed and metered as one piece.
        coalesce_reads()

    # --- before forwarding -------------------------------------------------------------------

    async def forward(self, flow: http.HTTPFlow, state: CallState) -> VendorReply | None:
        """Prepare and forward the call; or return the vendor-shaped refusal to send instead."""
        assert state.route is not None and state.body is not None
        cfg = self.config
        key = cfg.keys.get(state.vendor)
        if not key:
            state.outcome = "refused"
            return error_reply(
                state.vendor,
                401,
                f"The harness proxy holds no {state.vendor} key: set {KEY_ENV[state.vendor]} in "
                "the proxy's environment.",
            )
        if self.halted is not None:
            state.outcome = "refused"
            return error_reply(state.vendor, 503, f"The harness proxy stopped: {self.halted}")
        live = LiveCall()
        state.live = live
        # The body as pinned (proxy.flow.sampling, run for every mode by the addon); a copy, as
        # the stream-usage switch below may still change it. Shallow: that switch (and nothing
        # else before it goes out) only sets a top-level field, never changes a nested object.
        body = dict(state.sent if state.sent is not None else state.body)
        route = state.route.wire
        if route not in FREE_ROUTES:
            refusal = price_and_reserve(cfg, state, live, body)
            if refusal is not None:
                return refusal
            assert live.reservation is not None
            state.reserved = live.reservation.amount
            try:
                # Covered by a durable block before any byte leaves: a crash now still charges
                # this call. Its own journal line waits until it has gone out (`note_forwarded`).
                await cfg.journal.cover(live.reservation.amount)
            except OSError as e:
                cfg.budget.release(live.reservation)
                live.settled = True
                raise OSError(f"cannot write the reservation journal: {e}") from e
            live.unjournaled = True
        point_upstream(flow, state, self.upstreams[state.vendor], body, key)
        self.inflight[state.seq] = (flow, state)
        live.timer = asyncio.get_running_loop().call_later(
            cfg.deadline_s, self._deadline, flow, state
        )
        return None

    def note_forwarded(self, state: CallState) -> None:
        """The journal line of a reserved call that has gone out, once (rundir.calls.journal).
        Raises OSError if it cannot be written; the call's money is in a durable block already."""
        live: LiveCall | None = state.live
        if live is None or not live.unjournaled:
            return
        live.unjournaled = False
        assert live.reservation is not None and state.route is not None
        self.config.journal.note_call(
            state.seq, live.reservation.amount, live.model, state.route.name
        )

    # --- while the reply streams -------------------------------------------------------------

    def responseheaders(self, flow: http.HTTPFlow, state: CallState) -> None:
        live: LiveCall | None = state.live
        response = flow.response
        if live is None or response is None or state.route is None:
            return
        redact_head(self.redactor, state, response)  # before mitmproxy relays the headers
        if state.route.wire not in STREAM_ROUTES:
            return
        if not response.headers.get("content-type", "").startswith("text/event-stream"):
            return
        state.stream = True
        headers = response.headers
        if "chunked" not in headers.get("transfer-encoding", "").lower():
            # A body that ends at connection close would look complete to the arm however it
            # was cut; chunked framing lets a cut show as a broken stream. A vendor's length
            # no longer holds once a key is redacted or the body decoded.
            headers.pop("content-length", None)
            headers["transfer-encoding"] = "chunked"
        meter = StreamMeter(state.route.wire, live.model, hide_usage_chunk=live.hide_usage)
        live.meter = meter
        try:
            cleaner = live.cleaner = StreamCleaner(self.redactor, state, response)
        except DecodeError as e:
            cleaner = None
            self._undecodable(flow, state, e)

        def tap(chunk: bytes) -> list[bytes]:
            if cleaner is None or UNDECODABLE in state.flags:
                return []
            try:
                # Keys are cut out before the meter and the relay see a byte; the cleaner hands
                # the meter events it framed and parsed, so that is done once per event.
                clean = cleaner.feed(chunk) if chunk else cleaner.finish()
            except DecodeError as e:
                self._undecodable(flow, state, e)
                return []
            out = meter.feed_events(clean)
            if not chunk and not meter.terminal_seen and live.cut is None:
                # The stream ended without the vendor's terminal event. A clean end would look
                # complete to the SDK, so break the arm's connection instead.
                live.cut = "upstream_cut"
                self._abort_client(flow)
            if not out:
                # Never hand mitmproxy b"": it would send an empty chunk, which ends a chunked
                # body early. An empty list sends nothing.
                return []
            live.relayed += out
            live.chunks.append(len(out))
            return [out]

        response.stream = tap

    def _undecodable(self, flow: http.HTTPFlow, state: CallState, error: DecodeError) -> None:
        """A stream the proxy cannot read cannot be checked for keys: the arm gets a broken
        connection, the call is billed as cut."""
        live: LiveCall = state.live
        if live.cut is None:
            live.cut = "upstream_cut"
        state.flags.append(UNDECODABLE)
        log.error("an upstream stream could not be decoded; cut", seq=state.seq, error=str(error))
        self._abort_client(flow)
        self._close_server(flow)

    # --- settling ----------------------------------------------------------------------------

    def _deadline(self, flow: http.HTTPFlow, state: CallState) -> None:
        live: LiveCall = state.live
        if live.settled:
            return
        live.cut = "deadline"
        log.warning(
            "upstream deadline reached; closing the call",
            seq=state.seq,
            deadline_s=self.config.deadline_s,
        )
        self._abort_client(flow)
        self._close_server(flow)

    def finished(self, flow: http.HTTPFlow, state: CallState) -> None:
        """The `response` hook: the reply is complete (or its stream ended)."""
        live: LiveCall | None = state.live
        if live is None or flow.response is None:
            return
        status = flow.response.status_code
        if live.meter is not None:
            state.response_body = bytes(live.relayed)
            state.response_chunks = list(live.chunks)
            usage = live.meter.usage()
            state.model_served = usage.model
            self._settle(state, status, usage)
        else:
            # Decoded and redacted before mitmproxy relays it and before the call log stores it.
            state.response_body = redact_plain(self.redactor, state, flow.response)
            usage = None
            if status == 200 and state.route is not None:
                usage = usage_from_body(state.route.wire, state.response_body)
                if usage is None:
                    state.flags.append("no_usage")
            state.model_served = (
                usage.model if usage is not None else model_from_body(state.response_body)
            )
            self._settle(state, status, usage)

    def reply_ended(self, state: CallState) -> None:
        """The reply's last byte is out (its booking follows, proxy.flow.after_reply): the deadline
        can no longer cut it."""
        live: LiveCall | None = state.live
        if live is not None and live.timer:
            live.timer.cancel()

    def failed(self, flow: http.HTTPFlow, state: CallState) -> None:
        """The `error` hook: the client went away, the upstream broke, or the deadline hit."""
        live: LiveCall | None = state.live
        if live is None:
            return
        if live.cut is None:
            live.cut = "client_disconnect" if _client_gone(flow) else "upstream_cut"
        if live.cut == "upstream_cut" and flow.response is None:
            # The vendor never answered (refused, reset or unreachable): the arm must see what
            # the vendor itself would have given it, a broken connection, not mitmproxy's 502
            # page. A vendor whose TCP connection never opened received nothing and bills
            # nothing; one that did may have read (and bills) the request: the reservation.
            if flow.server_conn.timestamp_tcp_setup is None:
                live.cut = "upstream_unreachable"
            self._break_plain_reply(flow)
        elif live.cut == "upstream_cut" and live.meter is None:
            self._break_plain_reply(flow)
        if state.error:
            state.error = self.redactor.redact_text(state.error)
        if live.meter is not None and live.cleaner is not None:
            # The held tail never goes out, but the vendor sent (and bills) it: count it.
            live.meter.feed_events(live.cleaner.drain())
        usage = live.meter.usage() if live.meter else None
        if live.cut == "client_disconnect" and usage is not None and usage.terminal_seen:
            # The vendor had ended the stream itself (its terminal or error event was read)
            # before the arm left, often because the SDK raised on that very event: nothing
            # more will be generated or billed, so it settles as the vendor ended it.
            live.cut = None
        status = flow.response.status_code if flow.response else 0
        state.response_body = bytes(live.relayed) if live.meter else None
        state.model_served = usage.model if usage is not None else None
        self._settle(state, status, usage)

    def _break_plain_reply(self, flow: http.HTTPFlow) -> None:
        """A plain reply cut short (content-length not reached, a chunked body without its last
        chunk). mitmproxy would answer the arm with its "502 Bad Gateway" page, which an SDK
        takes for a vendor error (and retries); a flow killed in the error hook makes mitmproxy
        close the arm's connection with no response instead (check_killed sends NO_RESPONSE),
        and the abort makes the break unmistakable."""
        if flow.killable:
            flow.kill()
        self._abort_client(flow)

    def shutdown(self) -> list[CallState]:
        """Settle every call still in flight at its full reservation (we cannot know better)."""
        left = []
        for _flow, state in list(self.inflight.values()):
            state.live.cut = "shutdown"
            self._settle(state, 0, None)
            left.append(state)
        return left

    def _settle(self, state: CallState, status: int, usage: MeteredUsage | None) -> None:
        live: LiveCall = state.live
        if live.settled:
            return
        live.settled = True
        self.inflight.pop(state.seq, None)
        if live.timer:
            live.timer.cancel()
        if live.reservation is None:
            return  # a free route: nothing reserved, nothing to book
        halted = book(self.config, state, status, usage)
        if halted is not None:
            self.halted = halted

    # --- connections -------------------------------------------------------------------------

    def _handler(self, flow: http.HTTPFlow) -> Any:
        # mitmproxy cannot kill a flow that is already streaming (mitmproxy issues #4711 and
        # #8045), so the deadline and the cut rule act on the connections themselves.
        proxyserver = ctx.master.addons.get("proxyserver")
        return proxyserver.connections.get(flow.client_conn.id)

    def _abort_client(self, flow: http.HTTPFlow) -> None:
        """Break the arm's connection now: bytes not yet written are dropped, so a stream's
        final chunk never goes out and the arm's SDK sees a broken stream."""
        handler = self._handler(flow)
        transport = handler.transports.get(flow.client_conn) if handler else None
        if transport is not None and transport.writer is not None:
            transport.writer.transport.abort()

    def _close_server(self, flow: http.HTTPFlow) -> None:
        handler = self._handler(flow)
        if handler is not None and flow.server_conn in handler.transports:
            handler.close_connection(flow.server_conn)


def _client_gone(flow: http.HTTPFlow) -> bool:
    message = str(flow.error or "").lower()
    return "client" in message and ("disconnect" in message or "closed" in message)
