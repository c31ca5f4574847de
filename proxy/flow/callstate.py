"""What the addon knows about one call while it is in flight (kept in `flow.metadata`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from rundir.calls import CallRecord, Outcome, Rewrite, Tokens
from vendors.hosts import Vendor
from vendors.reply import VendorReply
from vendors.routes import Route

if TYPE_CHECKING:
    from proxy.flow.control import TurnRef


@dataclass
class CallState:
    vendor: Vendor
    path: str
    method: str
    arm: str
    purpose: str
    start: float
    seq: int = 0
    # The item and turn the arm ran when the call arrived (proxy.flow.control), for its record.
    turn: TurnRef | None = None
    # The arm's instance the call came from (`A` or a worker's copy `A@k`): the reuse and
    # reference books keep each instance's current item apart (proxy/flow/reuse.py).
    instance: str = ""
    route: Route | None = None
    body: dict[str, Any] | None = None
    raw: bytes = b""
    # The body answered or forwarded when the sampling rewrite changed it (proxy.flow.sampling);
    # `body`, the hash and the stored request stay the arm's as sent.
    sent: dict[str, Any] | None = None
    masked_body: Any = None  # `body` without the masked fields, as hashed
    request_hash: str = ""
    request_body: str | None = None
    # Live mode: passed every check, not yet hashed nor stored (proxy.flow.intake.keep_request runs
    # once the call has gone out).
    unkept: bool = False
    # Record mode: the stub's reply, and the StreamServer path when it is played, not set.
    reply: VendorReply | None = None
    played: str | None = None
    # Replay mode: the recording the call is answered from (its timing and cut), until sent.
    recording: CallRecord | None = None
    # Live mode: what was metered and booked.
    tokens: Tokens | None = None
    cost: Decimal = Decimal(0)
    reserved: Decimal = Decimal(0)  # the worst case held for the call before it was forwarded
    rewrites: list[Rewrite] = field(default_factory=list)
    model_served: str | None = None
    response_body: bytes | None = None
    response_content_type: str | None = None  # live: as the vendor sent it (replay serves it)
    response_chunks: list[int] | None = None
    stream: bool = False
    outcome: Outcome = "ok"
    error: str | None = None
    flags: list[str] = field(default_factory=list)
    logged: bool = False
    live: Any = None  # proxy.live.forwarder.LiveCall while a live call is in flight
    # A reuse hit (proxy/flow/reuse.py): the seq of the leader's call whose reply this one got.
    reuse_of: int | None = None

    @property
    def route_name(self) -> str:
        return self.route.name if self.route else f"{self.vendor}:{self.path}"
