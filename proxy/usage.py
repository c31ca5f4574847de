"""Token usage of a metered vendor call, with no double counting (wire-formats.md, trap 3 and 4).

Every vendor's usage is mapped to one split, the one `ledger.prices.TokenCounts` prices:
`input` EXCLUDES cache reads and writes, `output` INCLUDES reasoning, and `reasoning` only says
how much of `output` was thinking. OpenAI counts cached and cache-written tokens inside
`prompt_tokens`/`input_tokens`, so they are subtracted; Anthropic counts them apart, so they are
not. OpenAI's cache writes go to the `cache_write_5m` bucket (the price table prices that bucket
at the input rate when a model has no cache-write price); the Responses API's 12-hour retention
goes to `cache_write_1h`, the longer-lived (dearer) bucket.

Plain replies: `usage_from_body`. Streams: one `StreamMeter` per call, fed the upstream chunks;
it relays bytes unchanged and reads the usage events on the side. When a stream carries no final
usage, the output is counted with `proxy.tokencount` over the text the stream delivered, and
`count_request_input` counts the request when the input is unknown too.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from httpx_sse import ServerSentEvent

from proxy.server_tools import anthropic_block, anthropic_uses, openai_items, reply_tool_uses
from proxy.sse_events import EventFramer
from proxy.tokencount import count_request_input, count_tokens

Source = Literal["vendor", "proxy_count", "partial"]
STREAM_ROUTES = ("anthropic.messages", "openai.chat", "openai.responses")
__all__ = ["STREAM_ROUTES", "MeteredUsage", "StreamMeter", "count_request_input", "usage_from_body"]


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


def _int(value: Any) -> int:
    # Vendors send null for a detail they did not measure; bool is an int subclass but not a count.
    if isinstance(value, int) and not isinstance(value, bool):
        return max(value, 0)
    return 0


def _dict(value: Any) -> dict[str, Any]:
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
    five = _int(breakdown.get("ephemeral_5m_input_tokens"))
    hour = _int(breakdown.get("ephemeral_1h_input_tokens"))
    if five + hour <= total:
        excess = total - five - hour
        return (five, hour + excess) if hour else (five + excess, 0)
    hour = min(hour, total)
    return total - hour, hour


def _anthropic(usage: dict[str, Any]) -> MeteredUsage:
    writes = _int(usage.get("cache_creation_input_tokens"))
    five, hour = _split_cache_writes(writes, _dict(usage.get("cache_creation")))
    output = _int(usage.get("output_tokens"))
    thinking = _int(_dict(usage.get("output_tokens_details")).get("thinking_tokens"))
    return MeteredUsage(
        input=_int(usage.get("input_tokens")),
        output=output,
        cache_read=_int(usage.get("cache_read_input_tokens")),
        cache_write_5m=five,
        cache_write_1h=hour,
        reasoning=min(thinking, output),
    )


def _openai_chat(usage: dict[str, Any]) -> MeteredUsage:
    prompt = _dict(usage.get("prompt_tokens_details"))
    cached = _int(prompt.get("cached_tokens"))
    # cache_write_tokens are "prompt tokens written to cache": part of prompt_tokens, like
    # cached_tokens, so both come out of `input` to be priced once, at their own rate.
    written = _int(prompt.get("cache_write_tokens"))
    output = _int(usage.get("completion_tokens"))
    reasoning = _int(_dict(usage.get("completion_tokens_details")).get("reasoning_tokens"))
    return MeteredUsage(
        input=max(_int(usage.get("prompt_tokens")) - cached - written, 0),
        output=output,
        cache_read=cached,
        cache_write_5m=written,
        reasoning=min(reasoning, output),
    )


def _openai_responses(usage: dict[str, Any]) -> MeteredUsage:
    details = _dict(usage.get("input_tokens_details"))
    cached = _int(details.get("cached_tokens"))
    written = _int(details.get("cache_write_tokens"))
    ttl = _dict(details.get("cache_write_tokens_details"))
    long_lived = min(_int(ttl.get("ttl_12h_tokens")), written)
    output = _int(usage.get("output_tokens"))
    reasoning = _int(_dict(usage.get("output_tokens_details")).get("reasoning_tokens"))
    return MeteredUsage(
        input=max(_int(usage.get("input_tokens")) - cached - written, 0),
        output=output,
        cache_read=cached,
        cache_write_5m=written - long_lived,
        cache_write_1h=long_lived,
        reasoning=min(reasoning, output),
    )


def _openai_embeddings(usage: dict[str, Any]) -> MeteredUsage:
    return MeteredUsage(input=_int(usage.get("prompt_tokens")), output=0)


_FROM_USAGE = {
    "anthropic.messages": _anthropic,
    "openai.chat": _openai_chat,
    "openai.responses": _openai_responses,
    "openai.embeddings": _openai_embeddings,
}


def usage_from_body(route: str, body: bytes) -> MeteredUsage | None:
    """The vendor's usage in a plain (non-streamed) reply, or None when it has none (an error
    body, a route that is not billed by tokens, a body that is not JSON)."""
    convert = _FROM_USAGE.get(route)
    if convert is None:
        return None
    try:
        parsed = json.loads(body)
    except (ValueError, RecursionError):  # an upstream's body is input too: never a crash
        return None
    reply = _dict(parsed)
    usage = reply.get("usage")
    if not isinstance(usage, dict):
        return None
    return replace(
        convert(usage),
        service_tier=_tier(reply.get("service_tier")),
        model=model_from_body(body, reply),
        tool_uses=reply_tool_uses(route, reply, usage),
    )


def model_from_body(body: bytes, parsed: dict[str, Any] | None = None) -> str | None:
    """The model a plain reply names (Anthropic, OpenAI chat and Responses all say `model`)."""
    if parsed is None:
        try:
            parsed = _dict(json.loads(body))
        except (ValueError, RecursionError):
            return None
    return _tier(parsed.get("model"))


def _tier(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _replace_present(target: dict[str, Any], update: dict[str, Any]) -> None:
    # Anthropic's message_delta usage is cumulative: a field it carries replaces the earlier one,
    # a field it leaves out or sends as null keeps what message_start said.
    for key, value in update.items():
        if value is not None:
            target[key] = value


# Responses delta events whose `delta` is not text the model wrote: base64 audio, and the output
# of a hosted shell (a tool's output, billed as input when it is fed back).
_UNCOUNTED_RESPONSE_DELTAS = frozenset(
    {
        "response.audio.delta",
        "response.shell_call_output_content.delta",
    }
)
_RESPONSES_TERMINAL = ("response.completed", "response.incomplete", "response.failed")


class StreamMeter:
    """Relays one streamed reply and meters it. `feed` each upstream chunk and relay what it
    returns; at end of stream relay `finish()`; then read `usage()`.

    Relayed bytes equal the input bytes, except that for openai.chat with `hide_usage_chunk` the
    choice-less usage chunk (the proxy asked for it with `include_usage`; the arm did not) is
    removed, byte-exactly. Only in that mode is a partial event held back until it completes,
    since it might be the one to remove; otherwise each chunk is returned at once, unchanged.
    """

    def __init__(self, route: str, model: str, hide_usage_chunk: bool = False) -> None:
        if route not in STREAM_ROUTES:
            raise ValueError(
                f"no stream meter for route {route!r}; streamed routes: {', '.join(STREAM_ROUTES)}"
            )
        self.route = route
        self.model = model
        self._hide = hide_usage_chunk and route == "openai.chat"
        self._framer = EventFramer()
        self._usage: dict[str, Any] = {}  # the latest (merged, for Anthropic) vendor usage
        self._started = False  # Anthropic message_start seen: the input side is the vendor's
        self._start_output = 0  # message_start's nominal output count: a floor, never added
        self._final = False  # the vendor's final output usage arrived
        self._terminal = False
        self._error: dict[str, Any] | None = None
        self._text: list[str] = []
        self._thinking: list[str] = []
        self._tier: str | None = None
        self._model: str | None = None
        self._blocks: dict[str, int] = {}  # Anthropic server_tool_use blocks seen, by fee key
        self._items: dict[str, int] = {}  # Responses hosted tool calls in the final response

    def feed(self, chunk: bytes) -> bytes:
        if not chunk:
            return b""  # mitmproxy's end-of-stream call: the caller relays finish() instead
        events = self._framer.feed(chunk)
        if not self._hide:
            for framed in events:
                self._observe(framed.event)
            return chunk
        return b"".join(framed.raw for framed in events if not self._observe(framed.event))

    def finish(self) -> bytes:
        """The bytes still held back, to relay at end of stream (b"" unless hiding)."""
        rest = self._framer.finish()
        if rest is None:
            return b""
        hidden = self._observe(rest.event)
        return rest.raw if self._hide and not hidden else b""

    # -- reading events ------------------------------------------------------------------------

    def _observe(self, event: ServerSentEvent | None) -> bool:
        """Record what `event` says; True when it is the usage chunk to hide from the arm."""
        if event is None or not event.data:
            return False
        if self.route == "openai.chat" and event.data.strip() == "[DONE]":
            self._terminal = True
            return False
        try:
            data = json.loads(event.data)
        except (ValueError, RecursionError):
            return False  # a cut event, a keep-alive, or nesting too deep: nothing to meter
        if not isinstance(data, dict):
            return False
        if self.route == "anthropic.messages":
            self._anthropic_event(data)
            return False
        if self.route == "openai.chat":
            return self._chat_chunk(data)
        self._responses_event(data)
        return False

    def _anthropic_event(self, data: dict[str, Any]) -> None:
        kind = data.get("type")
        if kind == "content_block_delta":
            delta = _dict(data.get("delta"))
            if delta.get("type") == "thinking_delta":
                self._add(delta.get("thinking"), thinking=True)
            else:  # text_delta, input_json_delta (signature_delta carries neither field)
                self._add(delta.get("text"))
                self._add(delta.get("partial_json"))
        elif kind == "content_block_start":
            anthropic_block(data.get("content_block"), self._blocks)
        elif kind == "message_start":
            message = _dict(data.get("message"))
            self._model = _tier(message.get("model")) or self._model
            usage = _dict(message.get("usage"))
            self._started = True
            self._start_output = _int(usage.get("output_tokens"))
            # Its output_tokens (about 1) is not the reply's: message_delta brings the total.
            _replace_present(self._usage, {k: v for k, v in usage.items() if k != "output_tokens"})
        elif kind == "message_delta":
            usage = _dict(data.get("usage"))
            _replace_present(self._usage, usage)
            if usage.get("output_tokens") is not None:
                self._final = True
        elif kind == "message_stop":
            self._terminal = True
        elif kind == "error":
            self._error = data
            self._terminal = True

    def _chat_chunk(self, data: dict[str, Any]) -> bool:
        if "error" in data and "choices" not in data:
            self._error = data  # OpenAI's in-stream error, which the SDK raises as APIError
            self._terminal = True
            return False
        self._tier = _tier(data.get("service_tier")) or self._tier
        self._model = _tier(data.get("model")) or self._model
        choices = data.get("choices")
        for choice in choices if isinstance(choices, list) else []:
            delta = _dict(_dict(choice).get("delta"))
            self._add(delta.get("content"))
            self._add(delta.get("refusal"))
            # Not OpenAI's own fields, but compatible upstreams stream reasoning text in them.
            self._add(delta.get("reasoning_content"), thinking=True)
            self._add(delta.get("reasoning"), thinking=True)
            for call in delta.get("tool_calls") or []:
                function = _dict(_dict(call).get("function"))
                self._add(function.get("name"))
                self._add(function.get("arguments"))
        usage = data.get("usage")
        if not isinstance(usage, dict):
            return False
        # Some upstreams repeat a running usage on every chunk: the latest replaces, never adds.
        self._usage = usage
        self._final = True
        return self._hide and choices == []

    def _responses_event(self, data: dict[str, Any]) -> None:
        kind = data.get("type")
        if not isinstance(kind, str):
            return
        response = _dict(data.get("response"))
        self._model = _tier(response.get("model")) or self._model
        if kind.endswith(".delta") and kind not in _UNCOUNTED_RESPONSE_DELTAS:
            self._add(data.get("delta"), thinking="reasoning" in kind)
        elif kind in _RESPONSES_TERMINAL:
            self._terminal = True
            self._items = openai_items(response.get("output"))
            self._tier = _tier(response.get("service_tier")) or self._tier
            if isinstance(response.get("usage"), dict):
                self._usage = response["usage"]
                self._final = True
            if kind == "response.failed":
                self._error = {"type": kind, "error": response.get("error")}
        elif kind == "error":
            self._error = data
            self._terminal = True

    def _add(self, text: Any, thinking: bool = False) -> None:
        if isinstance(text, str) and text:
            self._text.append(text)
            if thinking:
                self._thinking.append(text)

    # -- the result ----------------------------------------------------------------------------

    def usage(self) -> MeteredUsage:
        """The call's usage as far as the stream has gone (final once `finish()` was called)."""
        text = "".join(self._text)
        vendor = _FROM_USAGE[self.route](self._usage) if self._usage else None
        if vendor is not None and self._final:
            return MeteredUsage(
                input=vendor.input,
                output=vendor.output,
                cache_read=vendor.cache_read,
                cache_write_5m=vendor.cache_write_5m,
                cache_write_1h=vendor.cache_write_1h,
                reasoning=vendor.reasoning,
                source="vendor",
                complete=self._terminal and self._error is None,
                terminal_seen=self._terminal,
                error_event=self._error,
                counted_output_text=text,
                service_tier=self._tier,
                model=self._model,
                tool_uses=self._tool_uses(),
            )
        # No final usage: bill the output the stream delivered. The vendor bills at least the
        # nominal token message_start announced, so that is a floor (a floor, not an addend).
        output = max(count_tokens(self.model, text), self._start_output)
        reasoning = min(count_tokens(self.model, "".join(self._thinking)), output)
        start = vendor if vendor is not None and self._started else None
        return MeteredUsage(
            input=start.input if start else None,
            output=output,
            cache_read=start.cache_read if start else 0,
            cache_write_5m=start.cache_write_5m if start else 0,
            cache_write_1h=start.cache_write_1h if start else 0,
            reasoning=reasoning,
            source="partial" if start else "proxy_count",
            complete=False,
            terminal_seen=self._terminal,
            error_event=self._error,
            counted_output_text=text,
            service_tier=self._tier,
            model=self._model,
            tool_uses=self._tool_uses(),
        )

    def _tool_uses(self) -> dict[str, int]:
        if self.route == "anthropic.messages":
            return anthropic_uses(self._usage, self._blocks)
        return dict(self._items)
