"""Live mode as the addon's `Mode`: calls forwarded to the vendor by proxy.live.forwarder, metered,
capped
and settled; the replies the proxy makes itself (refusals) sent as record mode sends its own.

Here, not in proxy/live/, so that the live package loads nothing of stubs/ (its test says so).
"""

from __future__ import annotations

from typing import Any, Protocol

from mitmproxy import http

from proxy.flow import INTERNAL_ERROR_FLAG, CallState
from proxy.modes.base import ModeName
from proxy.modes.record import RecordMode
from vendors.reply import VendorReply


class LiveTap(Protocol):
    """What of proxy.live.forwarder.MeteredForwarder the addon uses."""

    async def forward(self, flow: http.HTTPFlow, state: CallState) -> VendorReply | None: ...
    def note_forwarded(self, state: CallState) -> None: ...
    def responseheaders(self, flow: http.HTTPFlow, state: CallState) -> None: ...
    def reply_ended(self, state: CallState) -> None: ...
    def finished(self, flow: http.HTTPFlow, state: CallState) -> None: ...
    def failed(self, flow: http.HTTPFlow, state: CallState) -> None: ...
    def shutdown(self) -> list[CallState]: ...


class LiveMode:
    """The live `Mode`: calls go to the vendor through the metered forwarder; the replies the
    proxy makes itself are sent by record mode's sender."""

    name: ModeName = "live"
    forwards = True

    def __init__(self, live: LiveTap, setup: Any, local: RecordMode) -> None:
        self.live = live
        self.setup = setup  # proxy.live.setup.LiveSetup (ledger, writer, journal), or None
        self.local = local

    def warm(self) -> None:
        return None

    async def respond(self, flow: http.HTTPFlow, state: CallState) -> VendorReply | None:
        return await self.live.forward(flow, state)

    def send(self, flow: http.HTTPFlow, state: CallState, reply: VendorReply) -> None:
        self.local.send(flow, state, reply)

    def note_forwarded(self, state: CallState) -> None:
        self.live.note_forwarded(state)

    def responseheaders(self, flow: http.HTTPFlow, state: CallState) -> None:
        if state.live is not None:
            self.live.responseheaders(flow, state)

    def reply_ended(self, state: CallState) -> None:
        self.live.reply_ended(state)

    def finished(self, flow: http.HTTPFlow, state: CallState) -> None:
        if state.live is None:
            return  # refused before it was forwarded: nothing to meter
        assert flow.response is not None
        state.response_content_type = flow.response.headers.get("content-type")
        self.live.finished(flow, state)
        if INTERNAL_ERROR_FLAG in state.flags:
            state.outcome = "proxy_error"  # refused by us, not by the vendor

    def failed(self, flow: http.HTTPFlow, state: CallState) -> bool:
        if state.live is None:
            return False
        if flow.response is not None:
            state.response_content_type = flow.response.headers.get("content-type")
        self.live.failed(flow, state)
        if INTERNAL_ERROR_FLAG in state.flags:
            state.outcome = "proxy_error"  # broken by the proxy, not by the vendor
        return True

    def shutdown(self) -> list[CallState]:
        return self.live.shutdown()

    def close(self) -> None:
        if self.setup is not None:
            self.setup.close(self.live)
