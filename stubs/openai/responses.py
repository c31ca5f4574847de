"""POST /v1/responses in record mode: plain and streamed (typed events), structured output and
forced function calls, in OpenAI's exact wire shape (openai/types/responses/)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from stubs.formats import cut_to_tokens, json_object_reply, text_reply
from stubs.openai.common import CREATED, dumps, reasoning_tokens, seed, split_tokens, token_logprobs
from stubs.openai.responses_stream import stream_events
from stubs.openai.tools import functions_to_call
from stubs.request import StubRequest
from stubs.rules import StubContext
from stubs.schema import structured_json
from vendors.models import is_reasoning_model
from vendors.reply import Usage, VendorReply
from vendors.requests import (
    EMPTY_OBJECT_SCHEMA,
    FunctionSpec,
    ResponsesParams,
    max_output_tokens,
    parse_responses,
)
from vendors.tokens import estimate_input_tokens, estimate_tokens


def responses(req: StubRequest, ctx: StubContext) -> VendorReply:
    params = parse_responses(req.body)
    thinking = reasoning_tokens(req, params.model, params.effort)
    output: list[dict[str, Any]] = []
    if thinking:
        output.append({"id": "rs_" + req.token_id("reasoning"), "type": "reasoning", "summary": []})
    called = functions_to_call(
        req, ctx.book, params.functions, params.tool_choice, params.named_function
    )
    calls, written = _function_calls(req, ctx, called)
    output += calls
    message = None if called else _message(req, ctx, params, thinking)
    if message is not None:
        output.append(message.item)
        written = message.written
    cut = message is not None and message.cut
    input_tokens = estimate_input_tokens(req.body, ("input", "instructions", "tools", "text"))
    output_tokens = written + thinking
    usage = {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": thinking},
        "total_tokens": input_tokens + output_tokens,
    }
    # output_tokens already includes the reasoning ones: the harness's Usage must not add them.
    harness_usage = Usage(
        input_tokens=input_tokens, output_tokens=output_tokens, reasoning_tokens=thinking
    )
    final = _response_object(req, params, "incomplete" if cut else "completed", output, usage)
    if cut:
        final["incomplete_details"] = {"reason": "max_output_tokens"}
    if not params.stream:
        return VendorReply(
            status=200, chunks=[dumps(final)], model=params.model, usage=harness_usage
        )
    pending = _response_object(req, params, "in_progress", [], None)
    return VendorReply(
        status=200,
        chunks=stream_events(
            pending, final, message.tokens if message else [], message.logprobs if message else []
        ),
        content_type="text/event-stream",
        stream=True,
        model=params.model,
        usage=harness_usage,
    )


def _function_calls(
    req: StubRequest, ctx: StubContext, called: list[tuple[FunctionSpec, str]]
) -> tuple[list[dict[str, Any]], int]:
    """The `function_call` output items, arguments grounded in the user's words, and the
    tokens they are written with."""
    items: list[dict[str, Any]] = []
    written = 0
    for i, (function, focus) in enumerate(called):
        arguments = structured_json(
            req,
            ctx.book,
            function.parameters,
            function.name,
            seed(req, "arguments:" + function.name),
            focus,
        )
        suffix = "" if i == 0 else f":{i}"
        items.append(
            {
                "id": "fc_" + req.token_id("function_call" + suffix),
                "type": "function_call",
                "status": "completed",
                "arguments": arguments,
                "call_id": "call_" + req.token_id("call" + suffix),
                "name": function.name,
            }
        )
        written += estimate_tokens(function.name + arguments)
    return items, written


@dataclass(frozen=True)
class _Message:
    """The assistant's `message` output item and what the stream and the usage need of it."""

    item: dict[str, Any]
    tokens: list[str]
    logprobs: list[dict[str, Any]]
    written: int
    cut: bool


def _message(
    req: StubRequest, ctx: StubContext, params: ResponsesParams, thinking: int
) -> _Message:
    text = _reply_text(req, ctx, params)
    # max_output_tokens covers reasoning and answer; a cut answer is exactly what is left.
    limit = max_output_tokens(req.body, ("max_output_tokens",))
    room = None if limit is None else max(limit - thinking, 0)
    text, tokens, written, cut = cut_to_tokens(text, split_tokens(text), room)
    logprobs: list[dict[str, Any]] = []
    if params.top_logprobs is not None:
        logprobs = token_logprobs(req, "output_text", tokens, params.top_logprobs)
    item = {
        "id": "msg_" + req.token_id("message"),
        "type": "message",
        "status": "incomplete" if cut else "completed",
        "content": [{"type": "output_text", "annotations": [], "logprobs": logprobs, "text": text}],
        "role": "assistant",
    }
    return _Message(item, tokens, logprobs, written, cut)


def _reply_text(req: StubRequest, ctx: StubContext, params: ResponsesParams) -> str:
    kind = params.text_format.get("type")
    if kind == "json_schema":
        schema = params.text_format.get("schema", EMPTY_OBJECT_SCHEMA)
        name = params.text_format.get("name")
        return structured_json(req, ctx.book, schema, name, seed(req, "text.format"))
    if kind == "json_object":
        return json_object_reply(req, ctx.book, seed(req, "text.format"))
    return text_reply(req, ctx.book)


def _response_object(
    req: StubRequest,
    params: ResponsesParams,
    status: str,
    output: list[dict[str, Any]],
    usage: dict[str, Any] | None,
) -> dict[str, Any]:
    body = req.body
    effort = params.effort
    if effort is None and is_reasoning_model(params.model):
        effort = "medium"
    text_config = dict(body["text"]) if isinstance(body.get("text"), dict) else {}
    return {
        "id": "resp_" + req.token_id("response"),
        "object": "response",
        "created_at": CREATED,
        "status": status,
        "background": False,
        "completed_at": CREATED + 1 if status == "completed" else None,
        "error": None,
        "incomplete_details": None,
        "instructions": body.get("instructions"),
        "max_output_tokens": body.get("max_output_tokens"),
        "max_tool_calls": body.get("max_tool_calls"),
        "model": params.model,
        "output": output,
        "parallel_tool_calls": body.get("parallel_tool_calls", True),
        "previous_response_id": body.get("previous_response_id"),
        "prompt_cache_key": body.get("prompt_cache_key"),
        "reasoning": {"effort": effort, "summary": None},
        "safety_identifier": body.get("safety_identifier"),
        "service_tier": "default",
        "store": body.get("store", True),
        "temperature": body.get("temperature", 1.0),
        "text": {
            **text_config,
            "format": params.text_format,
            "verbosity": text_config.get("verbosity") or "medium",
        },
        "tool_choice": body.get("tool_choice") or "auto",
        "tools": body.get("tools") or [],
        "top_logprobs": body.get("top_logprobs") or 0,
        "top_p": body.get("top_p", 1.0),
        "truncation": body.get("truncation") or "disabled",
        "usage": usage,
        "user": body.get("user"),
        "metadata": body.get("metadata") or {},
    }
