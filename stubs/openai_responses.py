"""POST /v1/responses in record mode: plain and streamed (typed events), structured output and
forced function calls, in OpenAI's exact wire shape (openai/types/responses/)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from stubs.context import StubContext
from stubs.errors import StubRequestError
from stubs.openai_common import (
    CREATED,
    EMPTY_OBJECT_SCHEMA,
    FunctionSpec,
    check_request,
    check_top_logprobs,
    dumps,
    forced_function,
    group,
    is_reasoning_model,
    json_object_text,
    mentions_json,
    parse_function_tools,
    pieces,
    reasoning_tokens,
    seed,
    split_tokens,
    stream_flag,
    token_logprobs,
)
from stubs.openai_options import check_responses_options
from stubs.output_limit import cut_to_tokens, max_output_tokens
from stubs.request import StubReply, StubRequest, Usage
from stubs.structured import structured_json
from stubs.tokens import estimate_input_tokens, estimate_tokens

_INPUT_ROLES = ("user", "assistant", "system", "developer")
_TOKENS_PER_DELTA = 3
_ARGUMENT_PIECE = 16
_LOGPROBS_INCLUDE = "message.output_text.logprobs"


@dataclass
class _Params:
    model: str
    stream: bool = False
    functions: list[FunctionSpec] = field(default_factory=list)
    tool_choice: Any = None
    named_function: str | None = None
    text_format: dict[str, Any] = field(default_factory=lambda: {"type": "text"})
    effort: Any = None
    top_logprobs: int | None = None  # None: the caller did not ask for logprobs


def responses(req: StubRequest, ctx: StubContext) -> StubReply:
    params = _parse(req.body)
    thinking = reasoning_tokens(req, params.model, params.effort)
    output: list[dict[str, Any]] = []
    if thinking:
        output.append({"id": "rs_" + req.token_id("reasoning"), "type": "reasoning", "summary": []})
    forced = forced_function(
        req, "responses", params.functions, params.tool_choice, params.named_function
    )
    tokens: list[str] = []
    logprobs: list[dict[str, Any]] = []
    cut = False
    if forced is not None:
        arguments = structured_json(
            req, ctx.book, forced.parameters, forced.name, seed(req, "arguments:" + forced.name)
        )
        output.append(
            {
                "id": "fc_" + req.token_id("function_call"),
                "type": "function_call",
                "status": "completed",
                "arguments": arguments,
                "call_id": "call_" + req.token_id("call"),
                "name": forced.name,
            }
        )
        written = estimate_tokens(forced.name + arguments)
    else:
        text = _reply_text(req, ctx, params)
        # max_output_tokens covers reasoning and answer; a cut answer is exactly what is left.
        limit = max_output_tokens(req.body, ("max_output_tokens",))
        room = None if limit is None else max(limit - thinking, 0)
        text, tokens, written, cut = cut_to_tokens(text, split_tokens(text), room)
        if params.top_logprobs is not None:
            logprobs = token_logprobs(req, "output_text", tokens, params.top_logprobs)
        output.append(
            {
                "id": "msg_" + req.token_id("message"),
                "type": "message",
                "status": "incomplete" if cut else "completed",
                "content": [
                    {"type": "output_text", "annotations": [], "logprobs": logprobs, "text": text}
                ],
                "role": "assistant",
            }
        )
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
        return StubReply(status=200, chunks=[dumps(final)], model=params.model, usage=harness_usage)
    return StubReply(
        status=200,
        chunks=_stream_events(req, params, final, tokens, logprobs),
        content_type="text/event-stream",
        stream=True,
        model=params.model,
        usage=harness_usage,
    )


def _reply_text(req: StubRequest, ctx: StubContext, params: _Params) -> str:
    kind = params.text_format.get("type")
    if kind == "json_schema":
        schema = params.text_format.get("schema", EMPTY_OBJECT_SCHEMA)
        name = params.text_format.get("name")
        return structured_json(req, ctx.book, schema, name, seed(req, "text.format"))
    if kind == "json_object":
        return json_object_text(ctx.book.choose(req))
    return ctx.book.choose(req)


def _parse(body: dict[str, Any], per_model: bool = True) -> _Params:
    model = check_request(body, _check_prompt, per_model)
    reasoning = body.get("reasoning")
    if reasoning is not None and not isinstance(reasoning, dict):
        raise StubRequestError(
            400, "Invalid type for 'reasoning': expected an object.", "reasoning"
        )
    check_responses_options(body)
    params = _Params(model=model, stream=stream_flag(body), effort=(reasoning or {}).get("effort"))
    include = body.get("include") or []
    if not isinstance(include, list):
        raise StubRequestError(400, "Invalid type for 'include': expected an array.", "include")
    top = check_top_logprobs(body, True)
    if _LOGPROBS_INCLUDE in include:
        params.top_logprobs = top
    _parse_tools(body, params)
    _parse_text(body, params)
    return params


def check_responses(body: dict[str, Any]) -> None:
    """The checks of a Responses body that hold whatever the model (proxy.intake runs them in
    both modes, before live mode's pinned-sampling rewrite)."""
    _parse(body, per_model=False)


def _check_prompt(body: dict[str, Any]) -> None:
    _check_input(body.get("input"))
    instructions = body.get("instructions")
    if instructions is not None and not isinstance(instructions, str):
        raise StubRequestError(
            400, "Invalid type for 'instructions': expected a string.", "instructions"
        )


def _check_input(value: Any) -> None:
    if value is None:
        raise StubRequestError(400, "Missing required parameter: 'input'.", "input")
    if isinstance(value, str):
        return
    if not isinstance(value, list):
        raise StubRequestError(
            400, "Invalid type for 'input': expected a string or an array of input items.", "input"
        )
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            raise StubRequestError(
                400, f"Invalid type for 'input[{i}]': expected an object.", f"input[{i}]"
            )
        role = item.get("role")
        if role is None and not isinstance(item.get("type"), str):
            raise StubRequestError(
                400, f"Missing required parameter: 'input[{i}].role'.", f"input[{i}].role"
            )
        if role is not None and role not in _INPUT_ROLES:
            raise StubRequestError(
                400,
                f"Invalid value: '{role}'. Supported values are: 'user', 'assistant', "
                "'system', and 'developer'.",
                f"input[{i}].role",
            )


def _parse_tools(body: dict[str, Any], params: _Params) -> None:
    params.functions, choice = parse_function_tools(body, _function_of)
    params.tool_choice = choice
    if not isinstance(choice, dict):
        return
    if choice.get("type") == "function":
        if not isinstance(choice.get("name"), str):
            raise StubRequestError(
                400, "Missing required parameter: 'tool_choice.name'.", "tool_choice.name"
            )
        params.named_function = choice["name"]
    elif choice.get("type") == "allowed_tools":
        allowed = choice.get("tools")
        if not isinstance(allowed, list):
            raise StubRequestError(
                400, "Missing required parameter: 'tool_choice.tools'.", "tool_choice.tools"
            )
        names = {t.get("name") for t in allowed if isinstance(t, dict)}
        params.functions = [f for f in params.functions if f.name in names]
        params.tool_choice = choice.get("mode", "auto")


def _function_of(i: int, tool: Any) -> tuple[dict[str, Any], str] | None:
    if not isinstance(tool, dict) or not isinstance(tool.get("type"), str):
        raise StubRequestError(
            400, f"Missing required parameter: 'tools[{i}].type'.", f"tools[{i}].type"
        )
    if tool["type"] != "function":
        return None  # built-in and custom tools are offered but never forced by this stub
    if not isinstance(tool.get("name"), str):
        raise StubRequestError(
            400, f"Missing required parameter: 'tools[{i}].name'.", f"tools[{i}].name"
        )
    return tool, f"tools[{i}]"


def _parse_text(body: dict[str, Any], params: _Params) -> None:
    text = body.get("text")
    if text is None:
        return
    if not isinstance(text, dict):
        raise StubRequestError(400, "Invalid type for 'text': expected an object.", "text")
    fmt = text.get("format")
    if fmt is None:
        return
    if not isinstance(fmt, dict) or fmt.get("type") not in ("text", "json_object", "json_schema"):
        raise StubRequestError(
            400,
            "Invalid value for 'text.format.type': supported values are 'text', "
            "'json_object' and 'json_schema'.",
            "text.format.type",
        )
    if fmt["type"] == "json_schema":
        if not isinstance(fmt.get("name"), str):
            raise StubRequestError(
                400, "Missing required parameter: 'text.format.name'.", "text.format.name"
            )
        if not isinstance(fmt.get("schema", {}), dict):
            raise StubRequestError(
                400,
                "Invalid type for 'text.format.schema': expected an object.",
                "text.format.schema",
            )
    if fmt["type"] == "json_object" and not mentions_json(
        [body.get("input"), body.get("instructions")]
    ):
        raise StubRequestError(
            400,
            "Response input messages must contain the word 'json' in some form to use "
            "'text.format' of type 'json_object'.",
            "input",
        )
    params.text_format = fmt


def _response_object(
    req: StubRequest,
    params: _Params,
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


def _stream_events(
    req: StubRequest,
    params: _Params,
    final: dict[str, Any],
    tokens: list[str],
    logprobs: list[dict[str, Any]],
) -> list[bytes]:
    events: list[bytes] = []

    def emit(kind: str, **fields: Any) -> None:
        data = {"type": kind, "sequence_number": len(events), **fields}
        events.append(f"event: {kind}\n".encode() + b"data: " + dumps(data) + b"\n\n")

    pending = _response_object(req, params, "in_progress", [], None)
    emit("response.created", response=pending)
    emit("response.in_progress", response=pending)
    for index, item in enumerate(final["output"]):
        place = {"item_id": item["id"], "output_index": index}
        if item["type"] == "message":
            part = item["content"][0]
            emit(
                "response.output_item.added",
                output_index=index,
                item={**item, "status": "in_progress", "content": []},
            )
            emit(
                "response.content_part.added",
                **place,
                content_index=0,
                part={**part, "logprobs": [], "text": ""},
            )
            position = 0
            for chunk in group(tokens, _TOKENS_PER_DELTA):
                emit(
                    "response.output_text.delta",
                    **place,
                    content_index=0,
                    delta="".join(chunk),
                    logprobs=_delta_logprobs(logprobs[position : position + len(chunk)]),
                )
                position += len(chunk)
            emit(
                "response.output_text.done",
                **place,
                content_index=0,
                text=part["text"],
                logprobs=_delta_logprobs(logprobs),
            )
            emit("response.content_part.done", **place, content_index=0, part=part)
        elif item["type"] == "function_call":
            emit(
                "response.output_item.added",
                output_index=index,
                item={**item, "status": "in_progress", "arguments": ""},
            )
            for piece in pieces(item["arguments"], _ARGUMENT_PIECE):
                emit("response.function_call_arguments.delta", **place, delta=piece)
            emit(
                "response.function_call_arguments.done",
                **place,
                name=item["name"],
                arguments=item["arguments"],
            )
        else:
            emit("response.output_item.added", output_index=index, item=item)
        emit("response.output_item.done", output_index=index, item=item)
    # A reply cut at max_output_tokens ends as the vendor ends it: response.incomplete.
    emit("response." + final["status"], response=final)
    return events


def _delta_logprobs(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Stream events carry logprobs without byte lists (ResponseTextDeltaEvent.Logprob)."""
    return [
        {
            "token": e["token"],
            "logprob": e["logprob"],
            "top_logprobs": [
                {"token": t["token"], "logprob": t["logprob"]} for t in e["top_logprobs"]
            ],
        }
        for e in entries
    ]
