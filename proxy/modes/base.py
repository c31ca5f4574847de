"""The one interface the addon (proxy/app/addon.py) drives a run's mode through.

record answers from stubs/, replay from an earlier run's call log, live forwards to the vendor
metered and capped (proxy/live/). The addon holds one `Mode` and never asks which one it is: each
hook calls the mode, and a mode that has nothing to do there does nothing (`LocalMode`'s
defaults, for the two modes that answer every call themselves).
"""

from __future__ import annotations

from typing import Literal, Protocol

from mitmproxy import http

from proxy.flow import CallState
from vendors.reply import VendorReply

ModeName = Literal["record", "live", "replay"]


class Mode(Protocol):
    @property
    def name(self) -> ModeName:
        """The mode the call log records."""

    @property
    def forwards(self) -> bool:
        """Calls go upstream: a request is hashed and its body stored once it has gone out
        (proxy.flow.intake's `keep_later`), not before."""

    def warm(self) -> None:
        """Import now what the first call would otherwise import (the `running` hook)."""

    async def respond(self, flow: http.HTTPFlow, state: CallState) -> VendorReply | None:
        """The reply for a call that passed intake, or None once it has been forwarded."""

    def send(self, flow: http.HTTPFlow, state: CallState, reply: VendorReply) -> None:
        """Answer the arm with a reply made here (an answer or a refusal)."""

    def note_forwarded(self, state: CallState) -> None:
        """A forwarded call's request has gone out (its journal line)."""

    def responseheaders(self, flow: http.HTTPFlow, state: CallState) -> None:
        """A forwarded call's reply headers are in: set up metering of its body."""

    def reply_ended(self, state: CallState) -> None:
        """A streamed reply's body has gone out to the arm."""

    def finished(self, flow: http.HTTPFlow, state: CallState) -> None:
        """A forwarded call's reply is complete: meter and settle it."""

    def failed(self, flow: http.HTTPFlow, state: CallState) -> bool:
        """A call broke; True if the mode accounted for it (a forwarded call's settlement)."""

    def shutdown(self) -> list[CallState]:
        """Calls still in flight at the end, settled; the addon logs them."""

    def close(self) -> None:
        """Release what the mode holds (files, the ledger)."""


class LocalMode:
    """Defaults for a mode that answers every call itself: nothing is ever forwarded."""

    forwards = False

    def warm(self) -> None:
        return None

    def note_forwarded(self, state: CallState) -> None:
        return None

    def responseheaders(self, flow: http.HTTPFlow, state: CallState) -> None:
        return None

    def reply_ended(self, state: CallState) -> None:
        return None

    def finished(self, flow: http.HTTPFlow, state: CallState) -> None:
        return None

    def failed(self, flow: http.HTTPFlow, state: CallState) -> bool:
        return False

    def shutdown(self) -> list[CallState]:
        return []

    def close(self) -> None:
        return None
