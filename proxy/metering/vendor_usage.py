"""Token usage as each vendor reports it, mapped to one split with no double counting
(wire-formats.md, trap 3 and 4).

Every vendor's usage is mapped to the split `ledger.prices.TokenCounts` prices: `input` EXCLUDES
cache reads and writes, `output` INCLUDES reasoning, and `reasoning` only says how much of
`output` was thinking. OpenAI counts cached and cache-written tokens inside
`prompt_tokens`/`input_tokens`, so they are subtracted; Anthropic counts them apart, so they are
not. OpenAI's cache writes go to the `cache_write_5m` bucket (the price table prices that bucket
at the input rate when a model has no cache-write price); the Responses API's 12-hour retention
goes to `cache_write_1h`, the longer-lived (dearer) bucket.

Plain replies: `usage_from_body`. A stream's usage is read by `proxy.metering.usage.StreamMeter`,
which
maps the usage events it finds with `FROM_USAGE`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from proxy.metering.server_tools import reply_tool_uses

Source = Literal["vendor", "proxy_count", "partial"]


@dataclass(frozen=True)
class MeteredUsage:
    """What one call used. `input` is None when neither the vendor nor the stream said (the caller
    then counts the request with `count_request_input`). `source`: "vendor" when every figure is
    the vendor's, "proxy_count" when the output (and input) were counted here, "partial" when the
    input is the vendor's and the output was counted. `complete`: the vendor's final usage arrived
    and the stream ended with its terminal event. `terminal_seen`: the vendor ended the stream
    itself (terminal or error event), so it is relayed as it came rather than as a broken
    connection. `counted_output_text`: the output text the stream delivered, which a count covers.
    """

    input: int | None
    output: int
    cache_read: int = 0
    cache_write_5m: int = 0
    cache_write_1h: int = 0
    reasoning: int = 0
    source: Source = "vendor"
    complete: bool = True
    terminal_seen: bool = True
    error_event: dict[str, Any] | None = None
    counted_output_text: str = ""
    # The service tier the vendor says served (and bills) the call (OpenAI), when it says one.
    service_tier: str | None = None
    # The model the reply says served the call (the call log's `model_served`): a label, not
    # part of what was used, so two usages that bill alike compare equal whatever it says.
    model: str | None = field(default=None, compare=False)
    # Server-side tool uses the reply reports, by fee key ("anthropic.web_search": 3); final only
    # when `source` is "vendor" (billing books the worst case otherwise).
    tool_uses: dict[str, int] = field(default_factory=dict)


def count(value: Any) -> int:
    # Vendors send null for a detail they did not measure; bool is an int subclass but not a count.
    if isinstance(value, int) and not isinstance(value, bool):
        return max(value, 0)
    return 0


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _split_cache_writes(total: int, breakdown: dict[str, Any]) -> tuple[int, int]:
    """Anthropic cache writes as (5 minute, 1 hour) tokens.

    `message_delta` can restate the total without the breakdown (its type has no
    `cache_creation`). When the two disagree, unexplained tokens go to the 1-hour bucket if the
    call wrote any 1-hour entry (the dearer rate: never price a write below what it may cost),
    else to the 5-minute one; a smaller total is taken from the 5-minute part first.
    """
    if not breakdown:
        return total, 0  # no breakdown: the default (and, before 1-hour marks, only) TTL
    five = count(breakdown.get("ephemeral_5m_input_tokens"))
    hour = count(breakdown.get("ephemeral_1h_input_tokens"))
    if five + hour <= total:
        excess = total - five - hour
        return (five, hour + excess) if hour else (five + excess, 0)
    hour = min(hour, total)
    return total - hour, hour


def _anthropic(usage: dict[str, Any]) -> MeteredUsage:
    writes = count(usage.get("cache_creation_input_tokens"))
    five, hour = _split_cache_writes(writes, as_dict(usage.get("cache_creation")))
    output = count(usage.get("output_tokens"))
    thinking = count(as_dict(usage.get("output_tokens_details")).get("thinking_tokens"))
    return MeteredUsage(
        input=count(usage.get("input_tokens")),
        output=output,
        cache_read=count(usage.get("cache_read_input_tokens")),
        cache_write_5m=five,
        cache_write_1h=hour,
        reasoning=min(thinking, output),
    )


def _openai_chat(usage: dict[str, Any]) -> MeteredUsage:
    prompt = as_dict(usage.get("prompt_tokens_details"))
    cached = count(prompt.get("cached_tokens"))
    # cache_write_tokens are "prompt tokens written to cache": part of prompt_tokens, like
    # cached_tokens, so both come out of `input` to be priced once, at their own rate.
    written = count(prompt.get("cache_write_tokens"))
    output = count(usage.get("completion_tokens"))
    reasoning = count(as_dict(usage.get("completion_tokens_details")).get("reasoning_tokens"))
    return MeteredUsage(
        input=max(count(usage.get("prompt_tokens")) - cached - written, 0),
        output=output,
        cache_read=cached,
        cache_write_5m=written,
        reasoning=min(reasoning, output),
    )


def _openai_responses(usage: dict[str, Any]) -> MeteredUsage:
    details = as_dict(usage.get("input_tokens_details"))
    cached = count(details.get("cached_tokens"))
    written = count(details.get("cache_write_tokens"))
    ttl = as_dict(details.get("cache_write_tokens_details"))
    long_lived = min(count(ttl.get("ttl_12h_tokens")), written)
    output = count(usage.get("output_tokens"))
    reasoning = count(as_dict(usage.get("output_tokens_details")).get("reasoning_tokens"))
    return MeteredUsage(
        input=max(count(usage.get("input_tokens")) - cached - written, 0),
        output=output,
        cache_read=cached,
        cache_write_5m=written - long_lived,
        cache_write_1h=long_lived,
        reasoning=min(reasoning, output),
    )


def _openai_embeddings(usage: dict[str, Any]) -> MeteredUsage:
    return MeteredUsage(input=count(usage.get("prompt_tokens")), output=0)


FROM_USAGE = {
    "anthropic.messages": _anthropic,
    "openai.chat": _openai_chat,
    "openai.responses": _openai_responses,
    "openai.embeddings": _openai_embeddings,
}


def usage_from_body(route: str, body: bytes) -> MeteredUsage | None:
    """The vendor's usage in a plain (non-streamed) reply, or None when it has none (an error
    body, a route that is not billed by tokens, a body that is not JSON)."""
    convert = FROM_USAGE.get(route)
    if convert is None:
        return None
    try:
        parsed = json.loads(body)
    except (ValueError, RecursionError):  # an upstream's body is input too: never a crash
        return None
    reply = as_dict(parsed)
    usage = reply.get("usage")
    if not isinstance(usage, dict):
        return None
    return replace(
        convert(usage),
        service_tier=as_str(reply.get("service_tier")),
        model=model_from_body(body, reply),
        tool_uses=reply_tool_uses(route, reply, usage),
    )


def model_from_body(body: bytes, parsed: dict[str, Any] | None = None) -> str | None:
    """The model a plain reply names (Anthropic, OpenAI chat and Responses all say `model`)."""
    if parsed is None:
        try:
            parsed = as_dict(json.loads(body))
        except (ValueError, RecursionError):
            return None
    return as_str(parsed.get("model"))


def as_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
