"""The fake vendor's replies: the record-mode stubs' exact wire formats, with content-level
misbehaviour (errors, missing or misplaced usage) applied on top.

Socket-level misbehaviour (delays, cuts, resets, trickles, stalls) is the server's job; this module
only says what bytes a reply is made of, split into events, and what each event carries (output
text, final usage), so the server can count what it really sent.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from stubs.request import StubRequest
from stubs.routes import stub_handler
from stubs.rules.context import StubContext
from tests.fakevendor.behaviour import Behaviour
from vendors.errors import VendorRequestError, error_reply
from vendors.hosts import Vendor
from vendors.reply import VendorReply
from vendors.routes import Route, find_route

# Fields that do not change which reply a request gets (as in the proxy's own stub digest).
_DIGEST_IGNORED = ("stream", "stream_options")
_ANTHROPIC_PATHS = ("/v1/messages", "/v1/messages/count_tokens")


@dataclass
class Event:
    """One piece of the reply as written: an SSE event, or a whole plain body."""

    data: bytes
    text: str = ""  # output text it carries (text, thinking, tool-argument deltas)
    final_output_tokens: int | None = None  # the vendor's final output count, if it reports one
    terminal: bool = False  # the event that completes the reply (message_stop, [DONE], ...)
    split_at: int | None = None  # write it in two pieces, split here (echo.py)


@dataclass
class PlannedReply:
    vendor: Vendor
    route: str | None
    status: int
    content_type: str
    stream: bool
    events: list[Event]
    headers: list[tuple[str, str]] = field(default_factory=list)
    model: str | None = None
    input_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    full_output_tokens: int = 0  # what the whole reply holds, had it been sent in full
    reason: str = ""  # the status line's reason phrase (echo.py may quote a key in it)


def vendor_of(path: str, headers: dict[str, str]) -> Vendor:
    """Anthropic for its own paths, or for shared paths (GET /v1/models) when the client sends
    Anthropic's headers; OpenAI otherwise."""
    if path in _ANTHROPIC_PATHS or "anthropic-version" in headers or "x-api-key" in headers:
        return "anthropic"
    return "openai"


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


def _sse(event: str | None, obj: Any) -> bytes:
    head = f"event: {event}\n".encode() if event else b""
    return head + b"data: " + _dumps(obj) + b"\n\n"


def _sse_json(data: bytes) -> Any:
    for line in data.split(b"\n"):
        if line.startswith(b"data:"):
            payload = line[5:].strip()
            if payload == b"[DONE]":
                return "[DONE]"
            return json.loads(payload)
    return None


def _error(vendor: Vendor, status: int, message: str, route: str | None) -> PlannedReply:
    reply = error_reply(vendor, status, message)
    return PlannedReply(vendor, route, status, "application/json", False, [Event(reply.body)])


def status_reply(vendor: Vendor, behaviour: Behaviour, route: str | None) -> PlannedReply:
    assert behaviour.status is not None
    message = behaviour.message or f"fake vendor: status {behaviour.status} on request"
    planned = _error(vendor, behaviour.status, message, route)
    if vendor == "openai" and behaviour.status >= 500:
        # vendors.errors knows only the 5xx codes record mode sends; OpenAI types every 5xx so.
        body = json.loads(planned.events[0].data)
        body["error"]["type"] = "server_error"
        planned.events[0].data = _dumps(body)
    if behaviour.retry_after is not None:
        planned.headers.append(("retry-after", f"{behaviour.retry_after:g}"))
    return planned


def plan_reply(
    method: str,
    path: str,
    headers: dict[str, str],
    body: Any,
    behaviour: Behaviour,
    ctx: StubContext,
) -> PlannedReply:
    vendor = vendor_of(path, headers)
    route = find_route(vendor, method, path)
    if route is None:
        return _error(vendor, 404, f"fake vendor: no route {method} {path} for {vendor}", None)
    if behaviour.status is not None:
        return status_reply(vendor, behaviour, route.name)
    if not isinstance(body, dict):
        return _error(vendor, 400, "The request body must be a JSON object.", route.name)
    try:
        reply = _run(route, body, ctx)
    except VendorRequestError as e:
        err = error_reply(vendor, e.status, e.message, e.param, e.code)
        return PlannedReply(
            vendor, route.name, e.status, "application/json", False, [Event(err.body)]
        )
    if reply.status == 200 and route.name == "openai.chat" and behaviour.usage_in_choice_chunk:
        # Ask the stub for the usage chunk even if the client did not, then move it.
        reply = _run(route, {**body, "stream_options": {"include_usage": True}}, ctx)
    planned = PlannedReply(
        vendor=vendor,
        route=route.name,
        status=reply.status,
        content_type=reply.content_type,
        stream=reply.stream,
        events=[Event(chunk) for chunk in reply.chunks],
        headers=list(reply.headers.items()),
        model=reply.model,
        input_tokens=reply.usage.input_tokens,
        cache_read_tokens=reply.usage.cache_read_tokens,
        cache_write_tokens=reply.usage.cache_write_tokens,
        full_output_tokens=reply.usage.output_tokens,
    )
    if reply.status != 200:
        return planned
    if planned.stream:
        _annotate_stream(planned)
        _apply_stream_behaviour(planned, behaviour)
    else:
        _apply_plain_behaviour(planned, behaviour)
    if behaviour.service_tier is not None and planned.vendor == "openai":
        _report_service_tier(planned, behaviour.service_tier)
    if (
        behaviour.input_tokens is not None
        or behaviour.web_searches is not None
        or behaviour.served_model is not None
    ):
        _bill_as_told(planned, behaviour)
    return planned


def _usages(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Every usage object one event or body carries (message_start's is inside `message`, a
    Responses event's inside `response`)."""
    found = [data.get("usage")]
    for inner in ("message", "response"):
        if isinstance(data.get(inner), dict):
            found.append(data[inner].get("usage"))
    return [u for u in found if isinstance(u, dict)]


def _bill_as_told(planned: PlannedReply, behaviour: Behaviour) -> None:
    """Rewrite what the reply reports: input tokens billed, web searches run, model served."""
    if behaviour.input_tokens is not None:
        planned.input_tokens = behaviour.input_tokens
    for event in planned.events:
        data = _sse_json(event.data) if planned.stream else json.loads(event.data)
        if not isinstance(data, dict):
            continue
        for usage in _usages(data):
            if behaviour.input_tokens is not None:
                key = "prompt_tokens" if "prompt_tokens" in usage else "input_tokens"
                usage[key] = behaviour.input_tokens
            final = "output_tokens" in usage and data.get("type") != "message_start"
            if behaviour.web_searches is not None and planned.vendor == "anthropic" and final:
                usage["server_tool_use"] = {"web_search_requests": behaviour.web_searches}
        if behaviour.web_searches is not None:
            _add_searches(planned, data, behaviour.web_searches)
        if behaviour.served_model is not None:
            for target in (data, data.get("message"), data.get("response")):
                if isinstance(target, dict) and "model" in target:
                    target["model"] = behaviour.served_model
        if planned.stream:
            _rewrite(event, data, _event_prefix(event.data))
        else:
            event.data = _dumps(data)


def _add_searches(planned: PlannedReply, data: dict[str, Any], n: int) -> None:
    """The search calls themselves: Anthropic server_tool_use blocks (plain replies), OpenAI
    web_search_call items in the final Responses object."""
    plain = not planned.stream
    if planned.vendor == "anthropic" and plain and isinstance(data.get("content"), list):
        calls = [
            {"type": "server_tool_use", "id": f"srvtoolu_{i}", "name": "web_search", "input": {}}
            for i in range(n)
        ]
        data["content"] = calls + data["content"]
    if planned.route != "openai.responses":
        return
    response = data if plain else data.get("response")
    final = plain or data.get("type") in ("response.completed", "response.incomplete")
    if isinstance(response, dict) and final:
        calls = [
            {
                "type": "web_search_call",
                "id": f"ws_{i}",
                "status": "completed",
                "action": {"type": "search", "query": f"search {i}"},
            }
            for i in range(n)
        ]
        response["output"] = calls + list(response.get("output") or [])


def _report_service_tier(planned: PlannedReply, tier: str) -> None:
    """Where OpenAI reports the tier that served (and bills) the call: the completion or each
    chat chunk, the Responses object (in the stream, on its final event)."""
    for event in planned.events:
        data = _sse_json(event.data) if planned.stream else json.loads(event.data)
        if not isinstance(data, dict):
            continue
        target = data.get("response") if isinstance(data.get("response"), dict) else data
        if "service_tier" not in target:
            continue
        target["service_tier"] = tier
        if planned.stream:
            _rewrite(event, data, _event_prefix(event.data))
        else:
            event.data = _dumps(data)


def _run(route: Route, body: dict[str, Any], ctx: StubContext) -> VendorReply:
    kept = {k: v for k, v in body.items() if k not in _DIGEST_IGNORED}
    digest = hashlib.sha256(json.dumps(kept, sort_keys=True).encode()).digest()
    req = StubRequest(vendor=route.vendor, route=route.name, body=body, digest=digest)
    return stub_handler(route)(req, ctx)


def _annotate_stream(planned: PlannedReply) -> None:
    for event in planned.events:
        data = _sse_json(event.data)
        if data == "[DONE]":
            event.terminal = True
            continue
        if not isinstance(data, dict):
            continue
        kind = data.get("type")
        if planned.route == "anthropic.messages":
            if kind == "content_block_delta":
                delta = data["delta"]
                event.text = (
                    delta.get("text") or delta.get("thinking") or delta.get("partial_json") or ""
                )
            elif kind == "message_delta" and isinstance(data.get("usage"), dict):
                event.final_output_tokens = data["usage"].get("output_tokens")
            elif kind == "message_stop":
                event.terminal = True
        elif planned.route == "openai.chat":
            for choice in data.get("choices") or []:
                delta = choice.get("delta") or {}
                event.text += delta.get("content") or ""
                for call in delta.get("tool_calls") or []:
                    event.text += (call.get("function") or {}).get("arguments") or ""
            if isinstance(data.get("usage"), dict):
                event.final_output_tokens = data["usage"].get("completion_tokens")
        elif planned.route == "openai.responses":
            if kind in ("response.output_text.delta", "response.function_call_arguments.delta"):
                event.text = data.get("delta") or ""
            elif kind in ("response.completed", "response.incomplete", "response.failed"):
                event.terminal = True
                usage = (data.get("response") or {}).get("usage")
                if isinstance(usage, dict):
                    event.final_output_tokens = usage.get("output_tokens")


def _rewrite(event: Event, data: dict[str, Any], prefix: bytes = b"") -> None:
    event.data = prefix + b"data: " + _dumps(data) + b"\n\n"


def _event_prefix(data: bytes) -> bytes:
    return data.split(b"\n", 1)[0] + b"\n" if data.startswith(b"event:") else b""


def _apply_stream_behaviour(planned: PlannedReply, behaviour: Behaviour) -> None:
    if behaviour.no_usage or behaviour.usage_in_choice_chunk:
        kept: list[Event] = []
        usage: dict[str, Any] | None = None
        for event in planned.events:
            data = _sse_json(event.data)
            if not isinstance(data, dict):
                kept.append(event)
                continue
            if planned.route == "openai.chat" and data.get("usage") and not data.get("choices"):
                usage = data["usage"]
                continue  # the choice-less usage chunk goes (or moves, below)
            if (
                behaviour.no_usage
                and planned.route == "anthropic.messages"
                and data.get("type") == "message_delta"
            ):
                data.pop("usage", None)
                _rewrite(event, data, _event_prefix(event.data))
                event.final_output_tokens = None
            if (
                behaviour.no_usage
                and planned.route == "openai.responses"
                and data.get("type") == "response.completed"
            ):
                data["response"]["usage"] = None
                _rewrite(event, data, _event_prefix(event.data))
                event.final_output_tokens = None
            kept.append(event)
        if behaviour.usage_in_choice_chunk and usage is not None and not behaviour.no_usage:
            last = max(
                i
                for i, e in enumerate(kept)
                if isinstance(d := _sse_json(e.data), dict) and d.get("choices")
            )
            data = _sse_json(kept[last].data)
            data["usage"] = usage
            _rewrite(kept[last], data)
            kept[last].final_output_tokens = usage.get("completion_tokens")
        planned.events = kept
    if behaviour.error_after is not None:
        n = max(0, min(behaviour.error_after, len(planned.events) - 1))
        planned.events = [*planned.events[:n], _error_event(planned, behaviour, n)]


def _error_event(planned: PlannedReply, behaviour: Behaviour, sequence: int) -> Event:
    message = behaviour.message or "fake vendor: error after HTTP 200"
    if planned.vendor == "anthropic":
        kind = behaviour.error_type or "overloaded_error"
        data = _sse("error", {"type": "error", "error": {"type": kind, "message": message}})
    elif planned.route == "openai.responses":
        kind = behaviour.error_type or "server_error"
        data = _sse(
            "error",
            {
                "type": "error",
                "code": kind,
                "message": message,
                "param": None,
                "sequence_number": sequence,
            },
        )
    else:
        kind = behaviour.error_type or "server_error"
        data = _sse(
            None, {"error": {"message": message, "type": kind, "param": None, "code": None}}
        )
    # The vendor ends the stream cleanly after the error: it is the last event.
    return Event(data, terminal=True)


def _apply_plain_behaviour(planned: PlannedReply, behaviour: Behaviour) -> None:
    (event,) = planned.events
    data = json.loads(event.data)
    usage = data.get("usage") if isinstance(data, dict) else None
    if (
        behaviour.no_usage
        and planned.vendor == "openai"
        and isinstance(data, dict)
        and planned.route in ("openai.chat", "openai.responses")
    ):
        # Both SDK types allow a missing usage; Anthropic's Message requires one, so it keeps it.
        if planned.route == "openai.chat":
            data.pop("usage", None)
        else:
            data["usage"] = None
        event.data = _dumps(data)
        usage = None
    event.terminal = True
    if isinstance(usage, dict):
        event.final_output_tokens = usage.get("output_tokens", usage.get("completion_tokens"))
