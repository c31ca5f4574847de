"""Live mode after a call: what it is booked at, on every path (success, vendor error, cut
stream, deadline, client disconnect, shutdown), by the cut-call rule of `proxy.metering.billing`."""

from __future__ import annotations

import structlog

from ledger.entries import CallSettlement
from ledger.prices import TokenCounts, cost
from proxy.flow import CallState
from proxy.live.call import LiveCall, LiveConfig
from proxy.metering import (
    PREMIUM_TIER_WORST_MULTIPLE,
    PREMIUM_TIERS,
    MeteredUsage,
    billable,
    booked_tool_uses,
)
from rundir.calls import Tokens, TokenSource
from vendors.pins import WRONG_MODEL_FLAG, served_matches

log = structlog.get_logger("harness.proxy")


def book(cfg: LiveConfig, state: CallState, status: int, usage: MeteredUsage | None) -> str | None:
    """Book a reserved call by what the vendor bills (the cut-call rule), settle it in the run's
    budget and the ledger, and set its outcome, flags, tokens and cost on `state`. Returns why
    the proxy must stop forwarding (a premium tier the table cannot price), else None."""
    live: LiveCall = state.live
    assert live.reservation is not None and live.price is not None
    halted: str | None = None
    flags = state.flags
    assert state.route is not None and state.body is not None
    route, prices = state.route.wire, cfg.prices
    pinned = cfg.pins.pinned_model(state.purpose)
    if pinned is not None and status == 200 and not served_matches(pinned, state.model_served):
        # Model identity: the study pins this purpose's model and the reply names another (or
        # none). harness/run/watch/model_identity.py fails a main call's turn on this flag.
        flags.append(WRONG_MODEL_FLAG)
    tokens, source = billable(
        state.vendor, route, live.model, state.body, status, usage, live.cut, live.unbounded
    )
    tool_uses = booked_tool_uses(live.tools, usage, status, prices)
    if live.cut == "upstream_unreachable":
        tokens, source, tool_uses = TokenCounts(), "none", {}
    if tool_uses is None and usage is not None and usage.source == "vendor":
        flags.append("unpriced_tool_use")
    if tokens is None or tool_uses is None or live.cut == "client_disconnect":
        # A client that disconnects does not stop the vendor: it goes on generating and
        # bills the whole reply, which the proxy never sees (trap 13). The rule: such a
        # call is booked at its full reservation, the most the vendor can bill.
        actual = live.reservation.amount
        flags.append("billed_at_reservation")
        state.tokens = _logged_tokens(tokens or TokenCounts(), "reservation", tool_uses or {})
    else:
        actual = cost(live.price, tokens) + prices.fees(tool_uses)
        state.tokens = _logged_tokens(tokens, source, tool_uses)
    tier = usage.service_tier if usage is not None else None
    if tier in PREMIUM_TIERS:
        # Billed above the table's rates by a rate it does not have: book the worst case,
        # flag it, and stop forwarding until the tier is set back to standard.
        actual *= PREMIUM_TIER_WORST_MULTIPLE
        flags.append(f"premium_tier:{tier}")
        halted = (
            f"{state.vendor} served call {state.seq} at service tier {tier!r}, which the price "
            "table cannot price (booked at "
            f"{PREMIUM_TIER_WORST_MULTIPLE}x standard); set the project's default service "
            "tier to standard"
        )
        log.error("premium service tier billed; refusing further calls", reason=halted)
    if live.cut:
        flags.append(f"cut:{live.cut}")
        state.outcome = {
            "deadline": "upstream_deadline",
            "client_disconnect": "client_disconnect",
            "shutdown": "shutdown",
        }.get(live.cut, "upstream_cut")  # type: ignore[assignment]
    elif usage is not None and usage.error_event is not None:
        flags.append("error_event")
        state.outcome = "error_event"
    elif status != 200:
        state.outcome = "vendor_error"
    booked = cfg.budget.settle(live.reservation, actual)
    flags.extend(f for f in booked.flags if f not in flags)
    state.cost = actual
    if cfg.writer is not None:
        cfg.writer.submit(
            CallSettlement(run_id=cfg.run_id, seq=state.seq, cost_usd=actual, flags=tuple(flags))
        )
    return halted


def _logged_tokens(tokens: TokenCounts, source: TokenSource, uses: dict[str, int]) -> Tokens:
    return Tokens(
        input=tokens.input,
        output=tokens.output,
        cache_read=tokens.cache_read,
        cache_write=tokens.cache_write_5m + tokens.cache_write_1h,
        cache_write_1h=tokens.cache_write_1h,
        reasoning=tokens.reasoning,
        tool_uses=uses,
        source=source,
    )
