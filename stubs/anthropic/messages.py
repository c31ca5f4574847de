"""Record-mode answers for Anthropic `POST /v1/messages` and `POST /v1/messages/count_tokens`.

The reply is built once as a full Message dict (the shape of the 2.14 SDK's `types.Message`) and
then either sent as one JSON body or replayed as the SSE stream (`stubs.anthropic.stream`), so a
streamed and a plain call of the same request give the same message. Everything varies only with
the request digest; token counts come from `vendors.tokens`, so `count_tokens` agrees with
`usage` (input + cache writes).
"""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

import jsonschema

from stubs.anthropic.schema_hints import restore_hints
from stubs.anthropic.stream import message_events
from stubs.formats import text_reply
from stubs.prompt import OfferedTool, focus_of, grounding_of, tools_to_call, turn_of
from stubs.request import StubRequest
from stubs.rules import StubContext, conversation_texts
from stubs.schema import instance_for, patch_when_nothing_new, structured_value
from vendors.errors import VendorRequestError
from vendors.reply import Usage, VendorReply
from vendors.requests import MessagesPlan, check_messages, plan_messages
from vendors.tokens import estimate_input_tokens, estimate_tokens

# What the vendor counts as input: the same fields for a call and for count_tokens.
INPUT_FIELDS = ("system", "messages", "tools")
_THOUGHTS = (
    'The user wrote: "{words}". They want a short, direct answer, so I will acknowledge the '
    "point and reply briefly without adding anything they did not ask for.",
    'Let me consider the message: "{words}". Nothing here needs a tool or a long explanation; '
    "a concise reply that restates the key point is the most useful answer.",
    'The request is: "{words}". I should keep the answer focused and consistent with what was '
    "said earlier in the conversation, and not invent details.",
)


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _sub_digest(req: StubRequest, salt: str) -> bytes:
    return hashlib.sha256(req.digest + salt.encode()).digest()


def _fit(text: str, tokens: int) -> str:
    """The longest prefix of `text` whose estimate stays within `tokens` (~4 chars a token)."""
    if estimate_tokens(text) <= tokens:
        return text
    return text[: max(0, tokens) * 4]


def _thinking_block(req: StubRequest, plan: MessagesPlan, user: str) -> tuple[dict[str, Any], int]:
    words = " ".join(user.split()[:12])
    thought = _THOUGHTS[req.pick("thinking", len(_THOUGHTS))].format(words=words)
    # Manual thinking stays within its budget; adaptive thinking leaves half for the answer.
    cap = plan.thinking_budget if plan.thinking_budget is not None else plan.max_tokens // 2
    thought = _fit(thought, cap)
    seed = req.digest + b"signature:" + thought.encode()
    raw = b"".join(hashlib.sha256(seed + bytes([i])).digest() for i in range(3))
    block = {
        "type": "thinking",
        # "omitted" display: the thinking is still done (and billed), only its text is withheld.
        "thinking": "" if plan.thinking_omitted else thought,
        "signature": base64.b64encode(raw).decode(),
    }
    return block, estimate_tokens(thought)


def _tools_to_call(req: StubRequest, ctx: StubContext, plan: MessagesPlan) -> list[tuple[str, str]]:
    """The client tools the reply calls: a named `tool` choice forces it; `none` calls none;
    unset, `auto` and `any` ask stubs.prompt.tool_policy (which honours disable_parallel_tool_use
    and
    the stubs file's `tools` rules). Each comes with the part of the user's message its input
    answers (stubs.prompt.tool_policy.focus_of)."""
    if plan.forced_tool:
        return [(plan.forced_tool, "")]
    choice = req.body.get("tool_choice")
    choice = choice if isinstance(choice, dict) else {}
    if choice.get("type") == "none" or not plan.tools:
        return []
    offered = [
        OfferedTool(name, str(tool.get("description") or "")) for name, tool in plan.tools.items()
    ]
    turn = turn_of(req.body)
    chosen = tools_to_call(
        offered,
        "required" if plan.forced_tool == "" else "auto",
        turn,
        parallel=choice.get("disable_parallel_tool_use") is not True,
        override=ctx.book.tool_override(req),
        embedder=ctx.book.stubs.embeddings.model,
    )
    if plan.forced_tool == "" and ctx.book.tool_override(req) is None:
        schemas = {name: tool.get("input_schema") for name, tool in plan.tools.items()}
        patcher = patch_when_nothing_new(req.body, schemas)
        if patcher is not None:
            return [(patcher, "")]
    if len(chosen) == 1:
        return [(chosen[0].name, "")]
    return [(t.name, focus_of(turn.user, t, ctx.book.stubs.embeddings.model)) for t in chosen]


def _tool_use_block(
    req: StubRequest, ctx: StubContext, plan: MessagesPlan, name: str, focus: str
) -> tuple[dict[str, Any], int]:
    schema = plan.tools[name]["input_schema"]
    tool_input = structured_value(
        req, ctx.book, schema, name, _sub_digest(req, "tool_input:" + name), focus
    )
    block = {
        "type": "tool_use",
        "id": "toolu_" + req.token_id("tool_use:" + name),
        "name": name,
        "input": tool_input,
    }
    # A tool call is never cut at max_tokens here: a partial input would not validate, and the
    # arm under test could not use it; inputs from small schemas stay small anyway.
    return block, estimate_tokens(name) + estimate_tokens(_json(tool_input))


def _valid_for(schema: dict[str, Any], value: Any) -> bool:
    try:
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        return bool(cls(schema).is_valid(value))
    except Exception:  # an unusable schema is reported by instance_for with a proper 400
        return False


def _structured_text(req: StubRequest, ctx: StubContext, schema: dict[str, Any]) -> str:
    """JSON for `output_config.format`: the reply book's text when it already fits the schema
    (so a study can script structured replies: any matching rule, or the purpose's replies),
    else a deterministic valid instance grounded in the request (stubs.schema.structured).

    Both honour the constraints the SDK moved into descriptions, as the real model does, so
    `messages.parse()`'s pydantic validation accepts the reply.
    """
    strict = restore_hints(schema)
    candidate = ctx.book.choose(req)
    try:
        value = json.loads(candidate)
    except ValueError:
        pass
    else:
        if _valid_for(strict, value):
            return candidate
    digest = _sub_digest(req, "output_format")
    try:
        return _json(structured_value(req, ctx.book, strict, None, digest))
    except VendorRequestError:
        # Hints that contradict the schema: the schema that was sent is what must hold.
        return _json(instance_for(schema, digest, grounding_of(req.body)))


def _text_answer(
    req: StubRequest, ctx: StubContext, plan: MessagesPlan, room: int
) -> tuple[str, str, str | None]:
    """(text, stop_reason, stop_sequence) for a text reply with `room` output tokens left."""
    stop_reason, stop_sequence = "end_turn", None
    if plan.output_schema is not None:
        text = _structured_text(req, ctx, plan.output_schema)
    else:
        text = text_reply(req, ctx.book)
        hits = [(text.find(s), s) for s in plan.stop_sequences if s in text]
        if hits:
            # The model stops at the first stop sequence it would emit; the sequence itself
            # is not part of the text.
            at, seq = min(hits)
            text, stop_reason, stop_sequence = text[:at], "stop_sequence", seq
    if estimate_tokens(text) > room:
        text, stop_reason, stop_sequence = _fit(text, room), "max_tokens", None
    return text, stop_reason, stop_sequence


def build_message(req: StubRequest, ctx: StubContext) -> tuple[dict[str, Any], MessagesPlan, Usage]:
    """The full Message dict for a /v1/messages request, its plan, and the harness usage."""
    body = req.body
    total_input = estimate_input_tokens(body, INPUT_FIELDS)
    plan = plan_messages(body, total_input)
    _, user = conversation_texts(body)
    content: list[dict[str, Any]] = []
    thinking_tokens = 0
    if plan.thinking:
        block, thinking_tokens = _thinking_block(req, plan, user)
        content.append(block)
    stop_sequence: str | None = None
    calls = _tools_to_call(req, ctx, plan)
    if calls:
        answer_tokens = 0
        for name, focus in calls:
            block, spent = _tool_use_block(req, ctx, plan, name, focus)
            content.append(block)
            answer_tokens += spent
        stop_reason = "tool_use"
    else:
        # Thinking is capped below max_tokens (budget < max_tokens, or half of it), so room >= 1.
        room = plan.max_tokens - thinking_tokens
        text, stop_reason, stop_sequence = _text_answer(req, ctx, plan, room)
        answer_tokens = estimate_tokens(text)
        content.append({"type": "text", "text": text})
    # The vendor bills at least one output token, even for an empty answer.
    output_tokens = max(1, thinking_tokens + answer_tokens)
    cache_writes = plan.cache_5m + plan.cache_1h
    speed = body.get("speed")
    geo = body.get("inference_geo")
    usage = {
        "input_tokens": total_input - cache_writes,
        "cache_creation_input_tokens": cache_writes,
        "cache_read_input_tokens": 0,
        "cache_creation": {
            "ephemeral_5m_input_tokens": plan.cache_5m,
            "ephemeral_1h_input_tokens": plan.cache_1h,
        },
        "output_tokens": output_tokens,
        "output_tokens_details": {"thinking_tokens": thinking_tokens},
        "service_tier": "standard",
        "inference_geo": geo if isinstance(geo, str) and geo else "global",
        "speed": speed if speed in ("standard", "fast") else "standard",
    }
    message = {
        "id": "msg_" + req.token_id("message"),
        "type": "message",
        "role": "assistant",
        "model": plan.model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": stop_sequence,
        "usage": usage,
    }
    harness_usage = Usage(
        input_tokens=total_input - cache_writes,
        output_tokens=output_tokens,
        cache_write_tokens=cache_writes,
        reasoning_tokens=thinking_tokens,
    )
    return message, plan, harness_usage


def messages(req: StubRequest, ctx: StubContext) -> VendorReply:
    message, plan, usage = build_message(req, ctx)
    headers = {"request-id": "req_" + req.token_id("request")}
    if plan.stream:
        words = 2 + req.pick("stream:words", 3)
        return VendorReply(
            status=200,
            chunks=message_events(message, words),
            content_type="text/event-stream",
            stream=True,
            model=plan.model,
            usage=usage,
            headers=headers,
        )
    return VendorReply(
        status=200,
        chunks=[_json(message).encode()],
        model=plan.model,
        usage=usage,
        headers=headers,
    )


def count_tokens(req: StubRequest, ctx: StubContext) -> VendorReply:
    check_messages(req.body)
    count = estimate_input_tokens(req.body, INPUT_FIELDS)
    body = json.dumps({"input_tokens": count}, separators=(",", ":")).encode()
    return VendorReply(
        status=200,
        chunks=[body],
        model=req.body["model"],
        headers={"request-id": "req_" + req.token_id("request")},
    )
