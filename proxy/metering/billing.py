"""How a live call is priced: its worst case before it goes out, and what the vendor bills
after, by the cut-call rule (wire-formats notes, "Traps" 3-5)."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from ledger.errors import BudgetExceeded
from ledger.prices import ModelPrice, PriceTable, TokenCounts
from proxy.metering.server_tools import PER_CALL, ToolPlan
from proxy.metering.unbounded import InputBound, unbounded_inputs
from proxy.metering.usage import MeteredUsage, count_request_input
from rundir.calls import TokenSource
from vendors.errors import error_reply
from vendors.hosts import Vendor
from vendors.models import is_reasoning_model
from vendors.reply import VendorReply

# Vendors add hidden prompt tokens around tools (Anthropic documents a few hundred); the input
# bound allows for them so the reservation stays a true worst case.
TOOL_OVERHEAD_TOKENS = 1200
BASE_OVERHEAD_TOKENS = 64


def input_bound(route: str, body: dict[str, Any], raw_len: int) -> int:
    """An upper bound on the prompt tokens: every token carries at least one byte of the JSON body,
    plus the vendor's hidden overhead."""
    bound = raw_len + BASE_OVERHEAD_TOKENS
    if body.get("tools"):
        bound += TOOL_OVERHEAD_TOKENS
    return bound


def reserved_input(
    route: str, body: dict[str, Any], raw_len: int, price: ModelPrice, tools: ToolPlan
) -> tuple[int, InputBound]:
    """The prompt tokens to reserve for: the model's full input window when some input is not
    bounded by the request's bytes (by URL or file id, an inline PDF, audio, stored state, or
    content a server tool brings in), else the byte bound plus each inline image's allowance.
    The window is reserved at the highest tier's rates (`worst_case` takes every tier up to it),
    once per sampling iteration a server-tool loop may run (proxy.metering.server_tools)."""
    found = unbounded_inputs(body)
    if tools.server_side:
        found.unbounded.append("content brought in by server-side tools")
    if found.unbounded:
        # Each sampling iteration of a server-tool loop bills its whole prompt again.
        return price.context_window * tools.iterations, found
    return input_bound(route, body, raw_len) + found.extra_tokens, found


def booked_tool_uses(
    tools: ToolPlan, usage: MeteredUsage | None, status: int, table: PriceTable
) -> dict[str, int] | None:
    """The server-tool uses to book (priced by the table's fees), or None: the call is billed at
    its reservation, because the final usage never came (a cut or a disconnect: the vendor may
    have run more than it reported so far) or the reply used a tool the table cannot price."""
    if not tools.offered:
        return {}
    if usage is None and status >= 400:
        return {}  # refused by the vendor: no tool ran
    if usage is None or usage.source != "vendor":
        return None
    booked = {key: n for key, n in usage.tool_uses.items() if key not in PER_CALL and n > 0}
    for key in tools.offered:
        if key in PER_CALL:
            booked[key] = 1  # billed by container time, which usage does not report
    if any(table.tool_fee(key) is None for key in booked):
        return None
    return booked


# Per route, the values of billed options that the price table's standard rates cover. Any other
# value is a premium the table has no rate for (Anthropic fast mode and regional inference,
# OpenAI's Fast/Ultrafast tiers, formerly "priority"): refused, not guessed, because pricing it at
# the standard rate would under-count. Cheaper options (flex) are allowed: over-counted, safe.
# https://platform.claude.com/docs/build-with-claude/fast-mode
# https://developers.openai.com/api/docs/guides/fast-mode
STANDARD_OPTIONS: dict[str, dict[str, frozenset[str]]] = {
    "anthropic.messages": {
        "speed": frozenset({"standard"}),
        "inference_geo": frozenset({"global"}),
    },
    "openai.chat": {"service_tier": frozenset({"auto", "default", "flex"})},
    "openai.responses": {"service_tier": frozenset({"auto", "default", "flex"})},
}


# Service tiers a vendor may report having served a call at, above the table's standard rates
# (OpenAI's project-level default can be Fast even when the request names no tier). Such a call
# is booked at this multiple of its standard cost, the highest speed premium a vendor publishes
# (Anthropic fast mode on Opus 4.6/4.7: 6x), and the run stops forwarding.
PREMIUM_TIERS = frozenset({"priority", "fast", "ultrafast"})
PREMIUM_TIER_WORST_MULTIPLE = Decimal(6)


def unpriced_option(route: str, body: dict[str, Any]) -> str | None:
    """A premium option the request asks for that the price table cannot price, as `field=value`;
    None when every billed option is priced at the table's rates (or less)."""
    for field, allowed in STANDARD_OPTIONS.get(route, {}).items():
        value = body.get(field)
        if value is not None and value not in allowed:
            return f"{field}={json.dumps(value)}"
    return None


# Per route, the request's output limit fields, the first one set winning.
_OUTPUT_LIMITS = {
    "anthropic.messages": ("max_tokens",),
    "openai.chat": ("max_completion_tokens", "max_tokens"),
    "openai.responses": ("max_output_tokens",),
}


def max_output(route: str, body: dict[str, Any], price: ModelPrice) -> int:
    """The most output tokens the call may bill: the request's limit, else the model's."""
    if route.endswith(".embeddings") or route.endswith(".rerank"):
        return 0
    limit = None
    for key in _OUTPUT_LIMITS.get(route, ()):
        if isinstance(body.get(key), int):
            limit = body[key]
            break
    per_choice = price.max_output_tokens if limit is None else min(limit, price.max_output_tokens)
    n = body.get("n")
    choices = n if isinstance(n, int) and n > 1 else 1
    return int(per_choice * choices)


def billable(
    vendor: Vendor,
    route: str,
    model: str,
    body: dict[str, Any],
    status: int,
    usage: MeteredUsage | None,
    cut: str | None,
    unbounded: bool = False,
) -> tuple[TokenCounts | None, TokenSource]:
    """What the vendor bills; None means "charge the reservation" (it cannot be counted)."""
    if usage is None:
        if status >= 400 and cut is None:
            return TokenCounts(), "vendor"  # vendors do not bill refused calls
        return None, "reservation"
    if usage.source == "vendor":  # the final usage arrived, whatever happened after
        return _token_counts(usage, usage.input or 0), "vendor"
    if unbounded and usage.input is None:
        # Counting the request's text would miss the document or image it points at.
        return None, "reservation"
    if vendor == "openai" and is_reasoning_model(model):
        # Reasoning tokens are billed but never streamed as text: a count of what was seen
        # would under-count, so the worst case is charged.
        return None, "reservation"
    # Cut: input is billed once sent; output as far as it was counted.
    input_tokens = usage.input
    if input_tokens is None:
        input_tokens = count_request_input(route, model, body)
    source: TokenSource = "partial" if usage.input is not None else "proxy_count"
    return _token_counts(usage, input_tokens), source


def _token_counts(usage: MeteredUsage, input_tokens: int) -> TokenCounts:
    return TokenCounts(
        input=input_tokens,
        output=max(usage.output, usage.reasoning),
        cache_read=usage.cache_read,
        cache_write_5m=usage.cache_write_5m,
        cache_write_1h=usage.cache_write_1h,
        reasoning=usage.reasoning,
    )


def budget_refusal(vendor: Vendor, e: BudgetExceeded) -> VendorReply:
    """Out of budget, as each vendor says "out of credit": Anthropic 402 billing_error (the SDK's
    PaymentRequiredError), OpenAI 429 insufficient_quota (its RateLimitError)."""
    if vendor == "anthropic":
        body: dict[str, Any] = {
            "type": "error",
            "error": {"type": "billing_error", "message": str(e)},
        }
        return VendorReply(status=402, chunks=[json.dumps(body).encode()])
    return error_reply(vendor, 429, str(e), None, "insufficient_quota")
