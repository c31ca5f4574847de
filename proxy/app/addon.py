"""The harness mitmproxy addon: attribute, hash and log every call; answer it per the run's mode.

Options are prefixed `harness_` and validated in `configure` (proxy/app/configure.py), as
mitmproxy's own addons do; what a call is when it arrives (its arm, turn and purpose) is
proxy/app/arrival.py. The run's mode is one `Mode` (proxy/modes/base.py), `self.mode`: record
answers from `stubs/` (proxy.modes.record), live forwards metered and capped (proxy.modes.live
over proxy.live.forwarder), replay answers from an earlier run's call log and fails closed on a
miss (proxy.modes.replay).
"""

from __future__ import annotations

import time

import structlog
from mitmproxy import ctx, http

from proxy.app.arrival import (
    arriving_call,
    framing_refused_call,
    listener_instance,
    name_purpose,
)
from proxy.app.configure import AddonConfig
from proxy.calllog import CallSink
from proxy.flow import (
    AfterReply,
    CallState,
    HarnessControl,
    ReferenceBook,
    Refusal,
    ReuseBook,
    TurnBoard,
    as_response,
    bad_purpose,
    flag_unpinned_model,
    intake,
    internal_reply,
    keep_request,
    lowered,
    mark_failed,
    misbilled_judge,
    parse_refusal,
    pin_call,
    reply_as_sent,
)
from proxy.modes import CUT_OUTCOMES, Mode, RecordMode, StreamServer
from rundir.calls import DEFAULT_BODY_MASKS, UNSTORED_FLAGS, Tokens
from rundir.control import PurposeRule
from stubs.rules import StubContext
from vendors.errors import error_reply
from vendors.hosts import split_vendor
from vendors.pins import Pins
from vendors.reply import VendorReply
from vendors.requests import check_body

log = structlog.get_logger("harness.proxy")


class HarnessAddon(AddonConfig):
    def __init__(self) -> None:
        # Each arm's turn; the control addon's own board once it is found (`running`).
        self.turns = TurnBoard()
        self.stream_server = StreamServer()
        # The stubs answer record mode's calls and send every mode's own replies (refusals).
        self.record = RecordMode(StubContext(), self.stream_server)
        self.mode: Mode = self.record
        self.sink = CallSink()
        # A streamed reply's booking and record, after its end; a forwarded request's journal
        # line, hash and stored body, after it has been written upstream.
        self.after_reply = AfterReply()
        self.masks: tuple[str, ...] = DEFAULT_BODY_MASKS
        self.arm_ports: dict[int, str] = {}
        self.purposes: list[PurposeRule] = []
        self.reuse = ReuseBook()  # the study's leader -> follower reuse pairs (proxy/flow/reuse.py)
        self.pins = Pins()  # the study's pinned sampling, applied to every mode's calls alike
        self.reference = ReferenceBook()  # `[pins] from_arm`'s captured requests, per turn
        # Options every call reads, kept by `configure`: reading one through ctx.options
        # deep-copies its value each time (mitmproxy's `_Option.current`).
        self.arm = "default"
        self.body_limit = 0
        self.run_id = ""
        self.stage = "default"  # the ledger stage live mode charges (judges have their own)

    async def running(self) -> None:
        # The orchestrator writes the turns through the control endpoint: read that board.
        control = ctx.master.addons.get("harnesscontrol")
        if isinstance(control, HarnessControl):
            self.turns = control.turns
        self.mode.warm()
        await self.stream_server.start(ctx.options.harness_stream_port)
        self.sink.start(ctx.options.harness_sync_interval)

    async def done(self) -> None:
        self.after_reply.flush()  # streams that ended just now: settled as served, not as cut
        self.sink.stop()
        await self.stream_server.stop()
        for state in self.mode.shutdown():
            self._log(state, 0, None, time.time())
        self.sink.sync_quietly()
        self.mode.close()
        self.sink.close()

    # --- hooks -------------------------------------------------------------------------------

    async def request(self, flow: http.HTTPFlow) -> None:
        if flow.response is not None:
            return  # refused before it was a call (proxy.app.forward_guard)
        try:
            await self._request(flow)
        except Exception:
            # Whatever failed, the arm gets the vendor's own 500 (never mitmproxy's 502 page,
            # which the SDKs retry, nor a traceback) and the call is logged as ours to fix.
            self._internal_error(flow, "request")

    def _internal_error(self, flow: http.HTTPFlow, hook: str) -> None:
        state = flow.metadata.get("harness")
        if not isinstance(state, CallState):  # failed before the call had a state
            req = flow.request
            vendor, path = split_vendor(req.path, req.host_header or "", {})
            state = CallState(vendor, path, req.method, self.arm, "", time.time())
            state.seq = self.sink.next_seq()
            flow.metadata["harness"] = state
        mark_failed(state, hook)
        if state.played:
            self.stream_server.discard(state.played)
            state.played = None
        state.reply = internal_reply(state)
        flow.response = as_response(state.reply)

    async def _request(self, flow: http.HTTPFlow) -> None:
        headers = lowered(flow.request.headers)
        instance = listener_instance(flow, self.arm_ports, self.arm)
        state = arriving_call(flow, headers, instance, self.sink.next_seq(), self.turns)
        flow.metadata["harness"] = state
        reply = self._admit(state, flow.request, headers)
        if reply is None:
            # One rewrite in every mode: the stub answers what live mode would forward.
            reply = pin_call(state, self.reference.pins_for(state, self.pins))
            if reply is None:
                self.reference.capture(state, self.pins)
        if reply is None and self._reused(flow, state):
            return  # answered with the leader's reply: no vendor call, nothing booked
        if reply is None and self.mode.forwards:
            try:
                reply = await self.mode.respond(flow, state)
            except OSError as e:
                self.sink.fail(str(e))
                reply = self.sink.refusal(state)
            if reply is None:
                # The request goes out a few loop turns after this hook returns (its task waits
                # for its server event's lock, proxy.flow.after_reply); kept on the next turn, the
                # journal line, hash and body store still ran before that write (measured). So
                # they wait until the flow has its upstream connection, which mitmproxy sets
                # just before it writes the request (HttpStream.make_server_connection): still
                # before any reply can be read, and by `_log` at the latest. A write that fails
                # then stops every later call (CallSink.fail).
                pointed = flow.server_conn
                self.after_reply.defer(
                    lambda: self._keep(state), ready=lambda: flow.server_conn is not pointed
                )
                return  # forwarded
        elif reply is None:
            reply = await self.mode.respond(flow, state)
        assert reply is not None  # a mode that answers locally always has a reply
        self.mode.send(flow, state, reply)

    def _admit(
        self, state: CallState, req: http.Request, headers: dict[str, str]
    ) -> VendorReply | None:
        """The refusal a call gets before any mode sees it (the proxy stopped, a bad purpose,
        a judge billed to the wrong stage, a body its vendor would refuse), or None; its body
        read and its purpose named."""
        reply = (
            self.sink.refusal(state)
            or bad_purpose(state)
            or misbilled_judge(state, self.stage, self.mode.forwards)
        )
        if reply is not None:
            return reply
        headed = bool(state.purpose)
        try:
            reply = intake(
                state,
                req.raw_content or b"",
                self.masks,
                self.body_limit,
                self.sink.bodies,
                headers.get("content-encoding", ""),
                # Live: hashed and stored once forwarded, off the request's way in.
                keep_later=self.mode.forwards,
                check=check_body,
            )
        except OSError as e:
            self.sink.fail(f"cannot store request body: {e}")
            reply = self.sink.refusal(state)
        if not headed:
            name_purpose(state, self.purposes)
        return reply

    def _reused(self, flow: http.HTTPFlow, state: CallState) -> bool:
        """A follower's main request equal (masked) to its leader's of this turn: answer it with
        the leader's reply, in every mode (proxy/flow/reuse.py)."""
        if state.arm not in self.reuse.leader_of:
            return False
        if state.unkept:  # live: hashed only once forwarded; reuse needs the hash now
            try:
                keep_request(state, state.body, self.masks, self.sink.bodies)
            except OSError as e:
                self.sink.fail(f"cannot store request body: {e}")
                return False
        hit = self.reuse.lookup(state)
        if hit is None:
            return False
        state.reuse_of = hit.seq
        state.tokens = Tokens(source="none")  # booked once: the leader's call paid for it
        state.flags.extend(hit.flags)  # the leader's reply was not the pinned model's: nor is this
        self.mode.send(flow, state, hit.reply)
        return True

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        state = flow.metadata.get("harness")
        if not isinstance(state, CallState) or flow.response is None:
            return
        try:
            if state.played:
                flow.response.stream = True
            else:
                self.mode.responseheaders(flow, state)
        except Exception:
            # The reply can no longer be metered or checked for keys: break the arm's connection
            # (the error hook books the call at its reservation) rather than relay it unchecked.
            mark_failed(state, "responseheaders")
            if flow.killable:
                flow.kill()

    def response(self, flow: http.HTTPFlow) -> None:
        state = flow.metadata.get("harness")
        if not isinstance(state, CallState) or flow.response is None:
            return
        if state.played or state.stream:
            # Its body has gone out; its end goes out when this hook returns
            # (proxy.flow.after_reply):
            # book and log it just after, not on the stream's tail. The deadline stops now.
            self.mode.reply_ended(state)
            # mitmproxy clears `flow.live` just before it writes the end (HttpStream.flow_done).
            self.after_reply.defer(lambda: self._finish(flow, state), ready=lambda: not flow.live)
        else:
            self._finish(flow, state)

    def _finish(self, flow: http.HTTPFlow, state: CallState) -> None:
        assert flow.response is not None
        try:
            self._response(flow, state)
        except Exception:
            # Not metered or not logged: the reply must not leave as if it were. A live call that
            # failed to settle keeps its reservation booked (over-counted, never under).
            mark_failed(state, "response")
            if not (state.played or state.stream):
                flow.response = as_response(internal_reply(state))
            state.logged = False
            self._log(state, flow.response.status_code, None, time.time())

    def _response(self, flow: http.HTTPFlow, state: CallState) -> None:
        assert flow.response is not None
        self.mode.finished(flow, state)  # a forwarded call metered and settled
        first_byte = flow.response.timestamp_start
        end = flow.response.timestamp_end or time.time()
        if self.mode is self.record:
            flag_unpinned_model(state, self.pins, flow.response.status_code)
        logged = self._log(state, flow.response.status_code, first_byte, end)
        if logged and state.arm in self.reuse.leaders and flow.response.status_code == 200:
            kept = state.reply or reply_as_sent(state, flow.response.headers.get("content-type"))
            self.reuse.remember(state, kept)
        if not logged and not (state.played or state.stream):
            # The reply has not left yet: refuse it rather than serve an unrecorded call.
            refused = error_reply(state.vendor, 503, f"harness proxy: {self.sink.failed}")
            flow.response = http.Response.make(
                503, refused.body, {"content-type": "application/json"}
            )

    def error(self, flow: http.HTTPFlow) -> None:
        state = flow.metadata.get("harness")
        if not isinstance(state, CallState):
            refusal = parse_refusal(flow.error.msg) if flow.error else None
            if refusal is not None:
                self._framing_refused(flow, refusal)
            return
        try:
            self._error(flow, state)
        except Exception:
            mark_failed(state, "error")
            state.logged = False
            self._log(state, flow.response.status_code if flow.response else 0, None, time.time())

    def _error(self, flow: http.HTTPFlow, state: CallState) -> None:
        if state.played:
            self.stream_server.discard(state.played)
        state.error = str(flow.error) if flow.error else "connection lost"
        if self.mode.failed(flow, state):
            pass  # a forwarded call: settled at what it cost, its outcome set
        elif state.outcome in CUT_OUTCOMES:
            # A break the stubs or the recording asked for, served as asked: keep its outcome.
            state.flags.append("cut")
        else:
            state.outcome = "client_disconnect"
            state.flags.append("cut")
        status = flow.response.status_code if flow.response else 0
        first_byte = flow.response.timestamp_start if flow.response else None
        self._log(state, status, first_byte, time.time())

    def _framing_refused(self, flow: http.HTTPFlow, refusal: Refusal) -> None:
        """A request proxy.flow.framing refused before any hook: logged as the arm's bad
        request (proxy/app/arrival.py)."""
        instance = listener_instance(flow, self.arm_ports, self.arm)
        seq = self.sink.next_seq()
        state = framing_refused_call(flow, refusal, instance, seq, self.turns)
        keep_request(state, None, self.masks, None)
        self._log(state, refusal.status, None, time.time())

    # --- the call log ------------------------------------------------------------------------

    def _keep(self, state: CallState) -> None:
        """A forwarded live call's journal line, hash and stored body, once each
        (proxy.live.forwarder.note_forwarded, proxy.flow.intake.keep_request)."""
        try:
            self.mode.note_forwarded(state)
        except OSError as e:
            # Its money is covered (a durable block); later calls are refused.
            self.sink.fail(f"cannot write the reservation journal: {e}")
        except Exception:
            mark_failed(state, "request")
        if not state.unkept:
            return
        try:
            keep_request(state, state.body, self.masks, self.sink.bodies)
        except OSError as e:
            state.flags.append(UNSTORED_FLAGS["request_body"])
            self.sink.fail(f"cannot store request body: {e}")
        except Exception:
            mark_failed(state, "request")  # logged as ours to fix, never raised into the loop

    def _log(self, state: CallState, status: int, first_byte: float | None, end: float) -> bool:
        """Append the call's record; False (and the proxy stops serving) if it cannot."""
        self._keep(state)
        return self.sink.append(
            state,
            status,
            first_byte,
            end,
            run_id=self.run_id,
            # The proxy's mode, also for a call refused at intake (whose state.live is unset).
            mode="live" if state.live else self.mode.name,
        )
