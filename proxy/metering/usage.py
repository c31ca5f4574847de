"""A metered stream's token usage (wire-formats.md, trap 3 and 4): `StreamMeter`.

One `StreamMeter` per streamed call, fed the upstream chunks; it relays bytes unchanged and reads
the usage events on the side, mapping them with `proxy.metering.vendor_usage` (where plain replies
are
read, `usage_from_body`, and the split every usage is mapped to is described). When a stream
carries no final usage, the output is counted with `proxy.metering.tokencount` over the text the
stream
delivered, and `count_request_input` counts the request when the input is unknown too.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from httpx_sse import ServerSentEvent

from proxy.flow import DONE, UNPARSED, EventFramer, PlainBlock, Relay
from proxy.metering.server_tools import anthropic_block, anthropic_uses, openai_items
from proxy.metering.tokencount import count_request_input, count_tokens
from proxy.metering.vendor_usage import (
    FROM_USAGE,
    MeteredUsage,
    as_dict,
    as_str,
    count,
    model_from_body,
    usage_from_body,
)
from vendors.chat_chunk import ChatChunk

STREAM_ROUTES = ("anthropic.messages", "openai.chat", "openai.responses")
# A chat delta's text fields, in the order their text is counted, and whether it is reasoning.
_CHAT_DELTA_TEXT = (
    ("content", False),
    ("refusal", False),
    ("reasoning_content", True),
    ("reasoning", True),
)
_CHAT_TEXT_FIELDS = dict(_CHAT_DELTA_TEXT)
__all__ = [
    "STREAM_ROUTES",
    "MeteredUsage",
    "StreamMeter",
    "count_request_input",
    "model_from_body",
    "usage_from_body",
]


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

    def feed_events(self, events: Iterable[Relay]) -> bytes:
        """For a stream a previous stage has framed (the key guard, proxy.redact.events): the
        bytes of `events` to relay, each event observed once and its JSON not parsed again.
        Used instead of `feed` and `finish`, never mixed with them; the caller passes the
        stream's unterminated last event, if any, as the others."""
        out: list[bytes] = []
        for e in events:
            if type(e) is PlainBlock:
                out.append(self._observe_block(e))
            elif not self._observe(e.event, e.data):  # type: ignore[union-attr]
                out.append(e.raw)
        return b"".join(out)

    def _observe_block(self, block: PlainBlock) -> bytes:
        """A block of plain events (proxy.flow.sse_block), each observed as `_observe` would:
        its bytes to relay, without the usage chunk when that is hidden."""
        route = self.route
        hidden: list[int] = []
        for number, value in enumerate(block.values):
            if value is DONE:
                # `data: [DONE]` ends a chat stream; to any other route it is a line of no JSON.
                if route == "openai.chat":
                    self._terminal = True
            elif route == "openai.chat":
                if type(value) is ChatChunk:
                    self._chat_struct(value)
                elif self._chat_chunk(value):
                    hidden.append(number)
            elif route == "anthropic.messages":
                self._anthropic_event(value)
            else:
                self._responses_event(value)
        if not hidden:
            return block.raw
        return b"".join(
            part + b"\n\n" for number, part in enumerate(block.parts) if number not in hidden
        )

    @property
    def terminal_seen(self) -> bool:
        """The vendor ended the stream itself (its terminal or error event was read)."""
        return self._terminal

    def finish(self) -> bytes:
        """The bytes still held back, to relay at end of stream (b"" unless hiding)."""
        rest = self._framer.finish()
        if rest is None:
            return b""
        hidden = self._observe(rest.event)
        return rest.raw if self._hide and not hidden else b""

    # -- reading events ------------------------------------------------------------------------

    def _observe(self, event: ServerSentEvent | None, data: Any = UNPARSED) -> bool:
        """Record what `event` says (`data`: its JSON, if already parsed); True when it is the
        usage chunk to hide from the arm."""
        if event is None or not event.data:
            return False
        text = event.data
        # `strip() == "[DONE]"`, tested only when the data can end so (a JSON chunk ends in "}"):
        # the strip copied every event's data.
        if (
            self.route == "openai.chat"
            and (text[-1] == "]" or text[-1].isspace())
            and text.strip() == "[DONE]"
        ):
            self._terminal = True
            return False
        if data is UNPARSED:
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
            delta = as_dict(data.get("delta"))
            if delta.get("type") == "thinking_delta":
                self._add(delta.get("thinking"), thinking=True)
            else:  # text_delta, input_json_delta (signature_delta carries neither field)
                self._add(delta.get("text"))
                self._add(delta.get("partial_json"))
        elif kind == "content_block_start":
            anthropic_block(data.get("content_block"), self._blocks)
        elif kind == "message_start":
            message = as_dict(data.get("message"))
            self._model = as_str(message.get("model")) or self._model
            usage = as_dict(message.get("usage"))
            self._started = True
            self._start_output = count(usage.get("output_tokens"))
            # Its output_tokens (about 1) is not the reply's: message_delta brings the total.
            _replace_present(self._usage, {k: v for k, v in usage.items() if k != "output_tokens"})
        elif kind == "message_delta":
            usage = as_dict(data.get("usage"))
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
        # Inlined `as_str(...) or previous`: this runs on every event.
        tier = data.get("service_tier")
        if tier and isinstance(tier, str):
            self._tier = tier
        model = data.get("model")
        if model and isinstance(model, str):
            self._model = model
        choices = data.get("choices")
        for choice in choices if isinstance(choices, list) else []:
            delta = choice.get("delta") if isinstance(choice, dict) else None
            if not isinstance(delta, dict) or not delta:
                continue  # nothing to count (this runs on every event: no calls for nothing)
            if len(delta) == 1:
                # The common delta, one text field: its one lookup instead of the loop's four.
                ((field, text),) = delta.items()
                thinking = _CHAT_TEXT_FIELDS.get(field)
                if thinking is not None:
                    if isinstance(text, str) and text:
                        self._text.append(text)
                        if thinking:
                            self._thinking.append(text)
                    continue
            # Not OpenAI's own fields, the last two, but compatible upstreams stream reasoning
            # text in them.
            for field, thinking in _CHAT_DELTA_TEXT:
                text = delta.get(field)
                if isinstance(text, str) and text:
                    self._text.append(text)
                    if thinking:
                        self._thinking.append(text)
            for call in delta.get("tool_calls") or []:
                function = as_dict(as_dict(call).get("function"))
                self._add(function.get("name"))
                self._add(function.get("arguments"))
        usage = data.get("usage")
        if not isinstance(usage, dict):
            return False
        # Some upstreams repeat a running usage on every chunk: the latest replaces, never adds.
        self._usage = usage
        self._final = True
        return self._hide and choices == []

    def _chat_struct(self, chunk: ChatChunk) -> None:
        """`_chat_chunk` of the dict the chunk would decode to (vendors/chat_chunk.py): no
        error, tool call, reasoning text or usage can be in it."""
        if chunk.service_tier:
            self._tier = chunk.service_tier
        if chunk.model:
            self._model = chunk.model
        for choice in chunk.choices:
            # Its two text fields, content and refusal, in _CHAT_DELTA_TEXT's order; neither is
            # reasoning text.
            delta = choice.delta
            if delta.content:
                self._text.append(delta.content)
            if delta.refusal:
                self._text.append(delta.refusal)

    def _responses_event(self, data: dict[str, Any]) -> None:
        kind = data.get("type")
        if not isinstance(kind, str):
            return
        response = as_dict(data.get("response"))
        self._model = as_str(response.get("model")) or self._model
        if kind.endswith(".delta") and kind not in _UNCOUNTED_RESPONSE_DELTAS:
            self._add(data.get("delta"), thinking="reasoning" in kind)
        elif kind in _RESPONSES_TERMINAL:
            self._terminal = True
            self._items = openai_items(response.get("output"))
            self._tier = as_str(response.get("service_tier")) or self._tier
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
        vendor = FROM_USAGE[self.route](self._usage) if self._usage else None
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
