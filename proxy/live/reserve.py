"""Live mode before a call goes out: price the model (an unknown model is refused, never free),
plan the server tools, and reserve the worst case against the run's budget (refused past the
cap). The sampling fields were pinned before, in every mode alike (proxy.flow.sampling)."""

from __future__ import annotations

from typing import Any

import structlog

from ledger.errors import BudgetExceeded, UnknownModelError
from ledger.prices import worst_case
from proxy.flow import CallState
from proxy.live.call import LiveCall, LiveConfig
from proxy.metering import budget_refusal, max_output, plan_tools, reserved_input, unpriced_option
from rundir.calls import Rewrite
from vendors.errors import error_reply
from vendors.reply import VendorReply

log = structlog.get_logger("harness.proxy")


# The stream-usage switch's record for what an arm sends when it does not ask for usage (the
# field left out, or false), made once: records are only read, and a validated model on every
# streamed call was a measurable part of its pricing.
_USAGE_ASKED = {
    before: Rewrite(field="stream_options.include_usage", before=before, after=True)
    for before in (None, False)
}


def _usage_asked(before: Any) -> Rewrite:
    if before is None or before is False:  # not `in`: 0 == False, and 0 must be logged as 0
        return _USAGE_ASKED[before]
    return Rewrite(field="stream_options.include_usage", before=before, after=True)


def price_and_reserve(
    cfg: LiveConfig, state: CallState, live: LiveCall, body: dict[str, Any]
) -> VendorReply | None:
    """Price the model, plan the server tools and reserve the worst
    case; None when the call may go out, else the vendor-shaped refusal to send instead."""
    assert state.route is not None
    route = state.route.wire  # the wire shape: the compat route meters as openai.chat
    model = body.get("model")
    if not isinstance(model, str):
        state.outcome = "bad_request"
        return error_reply(state.vendor, 400, "model: Field required", "model")
    live.model = model
    try:
        live.price = cfg.prices.model(model)
    except UnknownModelError as e:
        state.outcome = "refused"
        return error_reply(state.vendor, 400, str(e), "model")
    premium = unpriced_option(route, body)
    if premium is not None:
        state.outcome = "refused"
        state.flags.append("unpriced_option")
        return error_reply(
            state.vendor,
            400,
            f"The harness proxy cannot price {premium}: the price table has standard rates "
            "only, and a premium tier billed at them would be under-counted. Remove it from "
            "the request.",
            premium.split("=", 1)[0],
        )
    if route == "openai.chat" and body.get("stream"):
        # Usage only arrives in a stream that asks for it; the extra chunk is then hidden
        # from an arm that did not ask (code reading chunk.choices[0] breaks on it).
        options = dict(body.get("stream_options") or {})
        if not options.get("include_usage"):
            live.hide_usage = True
            state.rewrites.append(_usage_asked(options.get("include_usage")))
            body["stream_options"] = {**options, "include_usage": True}
    live.tools = plan_tools(route, body, cfg.prices)
    if live.tools.refusal is not None:
        state.outcome = "refused"
        state.flags.append("unpriced_tool")
        return error_reply(state.vendor, 400, live.tools.refusal, live.tools.param)
    live.max_output = max_output(route, body, live.price)
    if route == "anthropic.messages":
        # max_tokens is not documented as a bound across a server-tool loop's iterations;
        # OpenAI's max_output_tokens is ("for a response", its Responses API reference).
        live.max_output *= live.tools.iterations
    prompt, found = reserved_input(route, body, len(state.raw), live.price, live.tools)
    if found.unbounded:
        live.unbounded = True
        state.flags.append("unbounded_input")
        log.info(
            "input not bounded by the request; reserving the full window",
            seq=state.seq,
            why=found.unbounded,
            window=prompt,
        )
    if live.tools.offered:
        state.flags.append("server_tools")
    worst = worst_case(live.price, prompt, live.max_output) + live.tools.worst_fee
    try:
        live.reservation = cfg.budget.reserve(worst, f"call {state.seq} ({route} {model})")
    except BudgetExceeded as e:
        state.outcome = "refused"
        state.flags.append("over_cap")
        return budget_refusal(state.vendor, e)
    return None
