"""POST /v1/chat/completions in record mode: plain and streamed, n choices, logprobs, forced tool
calls and structured output, in OpenAI's exact wire shape (openai/types/chat/)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from stubs.context import StubContext
from stubs.errors import StubRequestError
from stubs.openai_common import (
    CREATED,
    EMPTY_OBJECT_SCHEMA,
    SYSTEM_FINGERPRINT,
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
    sse_data,
    stream_flag,
    token_logprobs,
    variant,
)
from stubs.openai_options import check_chat_options, check_stream_options
from stubs.output_limit import cut_to_tokens, max_output_tokens
from stubs.request import StubReply, StubRequest, Usage
from stubs.structured import structured_json
from stubs.tokens import estimate_input_tokens, estimate_tokens

_ROLES = ("system", "assistant", "user", "function", "tool", "developer")
_TOKENS_PER_DELTA = 3  # "a few words" per content chunk, as the vendor streams
_ARGUMENT_PIECE = 16  # characters of tool arguments per delta


@dataclass
class _Params:
    model: str
    n: int = 1
    stream: bool = False
    include_usage: bool = False
    logprobs: bool = False
    top_logprobs: int = 0
    functions: list[FunctionSpec] = field(default_factory=list)
    tool_choice: Any = None
    named_function: str | None = None
    format_type: str = "text"
    schema: dict[str, Any] = field(default_factory=dict)
    schema_name: str | None = None
    effort: Any = None
    max_tokens: int | None = None


@dataclass
class _Choice:
    index: int
    content: str | None
    tool_calls: list[dict[str, Any]]
    finish_reason: str
    tokens: list[str]
    logprobs: list[dict[str, Any]] | None
    completion_tokens: int
    reasoning_tokens: int


def chat_completions(req: StubRequest, ctx: StubContext) -> StubReply:
    params = _parse(req.body)
    choices = [_choice(req, ctx, params, i) for i in range(params.n)]
    prompt = estimate_input_tokens(req.body, ("messages", "tools", "response_format"))
    completion = sum(c.completion_tokens for c in choices)
    reasoning = sum(c.reasoning_tokens for c in choices)
    usage = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": reasoning,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }
    # prompt_tokens already includes the (zero) cached tokens and completion_tokens the reasoning
    # ones: the harness's Usage must not add them again.
    harness_usage = Usage(input_tokens=prompt, output_tokens=completion, reasoning_tokens=reasoning)
    completion_id = "chatcmpl-" + req.token_id("chatcmpl")
    if params.stream:
        return StubReply(
            status=200,
            chunks=_stream_events(completion_id, params, choices, usage),
            content_type="text/event-stream",
            stream=True,
            model=params.model,
            usage=harness_usage,
        )
    body = {
        "id": completion_id,
        "object": "chat.completion",
        "created": CREATED,
        "model": params.model,
        "choices": [_plain_choice(c, params) for c in choices],
        "usage": usage,
        "service_tier": "default",
        "system_fingerprint": SYSTEM_FINGERPRINT,
    }
    return StubReply(status=200, chunks=[dumps(body)], model=params.model, usage=harness_usage)


def _parse(body: dict[str, Any], per_model: bool = True) -> _Params:
    model = check_request(body, lambda b: _check_messages(b.get("messages")), per_model)
    if per_model and is_reasoning_model(model) and body.get("max_tokens") is not None:
        raise StubRequestError(
            400,
            "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
            "'max_completion_tokens' instead.",
            "max_tokens",
        )
    check_chat_options(body)
    params = _Params(model=model, stream=stream_flag(body), effort=body.get("reasoning_effort"))
    params.max_tokens = max_output_tokens(body, ("max_completion_tokens", "max_tokens"))
    n = body.get("n", 1)
    if n is None:
        n = 1
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 128:
        raise StubRequestError(400, "Invalid 'n': expected an integer between 1 and 128.", "n")
    params.n = n
    options = body.get("stream_options")
    if options is not None:
        if not params.stream:
            raise StubRequestError(
                400,
                "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
                "stream_options",
            )
        if not isinstance(options, dict):
            raise StubRequestError(
                400, "Invalid type for 'stream_options': expected an object.", "stream_options"
            )
        check_stream_options(options)
        params.include_usage = options.get("include_usage") is True
    logprobs = body.get("logprobs")
    if logprobs is not None and not isinstance(logprobs, bool):
        raise StubRequestError(400, "Invalid type for 'logprobs': expected a boolean.", "logprobs")
    params.logprobs = bool(logprobs)
    params.top_logprobs = check_top_logprobs(body, params.logprobs)
    _parse_tools(body, params)
    _parse_response_format(body, params)
    return params


def check_chat(body: dict[str, Any]) -> None:
    """The checks of a chat completions body that hold whatever the model (proxy.intake runs
    them in both modes, before live mode's pinned-sampling rewrite)."""
    _parse(body, per_model=False)


def _check_messages(messages: Any) -> None:
    if messages is None:
        raise StubRequestError(400, "Missing required parameter: 'messages'.", "messages")
    if not isinstance(messages, list):
        raise StubRequestError(
            400, "Invalid type for 'messages': expected an array of objects.", "messages"
        )
    if not messages:
        raise StubRequestError(
            400,
            "Invalid 'messages': empty array. Expected an array with minimum length 1, but "
            "got an empty array instead.",
            "messages",
        )
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            raise StubRequestError(
                400, f"Invalid type for 'messages[{i}]': expected an object.", f"messages[{i}]"
            )
        role = message.get("role")
        if role is None:
            raise StubRequestError(
                400, f"Missing required parameter: 'messages[{i}].role'.", f"messages[{i}].role"
            )
        if role not in _ROLES:
            raise StubRequestError(
                400,
                f"Invalid value: '{role}'. Supported values are: 'system', 'assistant', "
                "'user', 'function', 'tool', and 'developer'.",
                f"messages[{i}].role",
            )


def _parse_tools(body: dict[str, Any], params: _Params) -> None:
    params.functions, choice = parse_function_tools(body, _function_of)
    params.tool_choice = choice
    if not isinstance(choice, dict):
        return
    kind = choice.get("type")
    if kind == "function":
        function = choice.get("function")
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise StubRequestError(
                400,
                "Missing required parameter: 'tool_choice.function.name'.",
                "tool_choice.function.name",
            )
        params.named_function = function["name"]
    elif kind == "allowed_tools":
        allowed = choice.get("allowed_tools")
        if not isinstance(allowed, dict) or not isinstance(allowed.get("tools"), list):
            raise StubRequestError(
                400,
                "Missing required parameter: 'tool_choice.allowed_tools.tools'.",
                "tool_choice.allowed_tools.tools",
            )
        names = {
            t["function"].get("name")
            for t in allowed["tools"]
            if isinstance(t, dict) and isinstance(t.get("function"), dict)
        }
        params.functions = [f for f in params.functions if f.name in names]
        params.tool_choice = allowed.get("mode", "auto")
    elif kind != "custom":
        raise StubRequestError(
            400, f"Invalid value for 'tool_choice.type': '{kind}'.", "tool_choice.type"
        )


def _function_of(i: int, tool: Any) -> tuple[dict[str, Any], str] | None:
    if not isinstance(tool, dict) or tool.get("type") not in ("function", "custom"):
        raise StubRequestError(
            400,
            f"Invalid value for 'tools[{i}].type': expected 'function' or 'custom'.",
            f"tools[{i}].type",
        )
    if tool["type"] != "function":
        return None  # custom (free-text) tools are offered but never forced by this stub
    function = tool.get("function")
    if not isinstance(function, dict) or not isinstance(function.get("name"), str):
        raise StubRequestError(
            400,
            f"Missing required parameter: 'tools[{i}].function.name'.",
            f"tools[{i}].function.name",
        )
    return function, f"tools[{i}].function"


def _parse_response_format(body: dict[str, Any], params: _Params) -> None:
    fmt = body.get("response_format")
    if fmt is None:
        return
    if not isinstance(fmt, dict) or fmt.get("type") not in ("text", "json_object", "json_schema"):
        raise StubRequestError(
            400,
            "Invalid value for 'response_format.type': supported values are 'text', "
            "'json_object' and 'json_schema'.",
            "response_format.type",
        )
    params.format_type = fmt["type"]
    if fmt["type"] == "json_object" and not mentions_json(body.get("messages")):
        raise StubRequestError(
            400,
            "'messages' must contain the word 'json' in some form, to use 'response_format' "
            "of type 'json_object'.",
            "messages",
        )
    if fmt["type"] == "json_schema":
        spec = fmt.get("json_schema")
        if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
            raise StubRequestError(
                400,
                "Missing required parameter: 'response_format.json_schema.name'.",
                "response_format.json_schema.name",
            )
        schema = spec.get("schema", EMPTY_OBJECT_SCHEMA)
        if not isinstance(schema, dict):
            raise StubRequestError(
                400,
                "Invalid type for 'response_format.json_schema.schema': expected an object.",
                "response_format.json_schema.schema",
            )
        params.schema = schema
        params.schema_name = spec["name"]


def _choice(req: StubRequest, ctx: StubContext, params: _Params, index: int) -> _Choice:
    vreq = variant(req, index)
    thinking = reasoning_tokens(vreq, params.model, params.effort)
    forced = forced_function(
        vreq, "chat", params.functions, params.tool_choice, params.named_function
    )
    if forced is not None:
        arguments = structured_json(
            vreq, ctx.book, forced.parameters, forced.name, seed(vreq, "arguments:" + forced.name)
        )
        call = {
            "id": "call_" + vreq.token_id("call"),
            "type": "function",
            "function": {"name": forced.name, "arguments": arguments},
        }
        spent = estimate_tokens(forced.name + arguments) + thinking
        return _Choice(index, None, [call], "tool_calls", [], None, spent, thinking)
    if params.format_type == "json_schema":
        text = structured_json(
            vreq, ctx.book, params.schema, params.schema_name, seed(vreq, "response_format")
        )
    elif params.format_type == "json_object":
        text = json_object_text(ctx.book.choose(vreq))
    else:
        text = ctx.book.choose(vreq)
    # The visible answer gets what max_tokens leaves after thinking; a cut answer is exactly
    # that many tokens, and its logprobs cover the same tokens as its text.
    room = None if params.max_tokens is None else max(params.max_tokens - thinking, 0)
    text, tokens, written, cut = cut_to_tokens(text, split_tokens(text), room)
    logprobs = (
        token_logprobs(vreq, "content", tokens, params.top_logprobs) if params.logprobs else None
    )
    spent = written + thinking
    return _Choice(index, text, [], "length" if cut else "stop", tokens, logprobs, spent, thinking)


def _plain_choice(choice: _Choice, params: _Params) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": "assistant",
        "content": choice.content,
        "refusal": None,
        "annotations": [],
    }
    if choice.tool_calls:
        message["tool_calls"] = choice.tool_calls
    logprobs = None
    if params.logprobs and choice.logprobs is not None:
        logprobs = {"content": choice.logprobs, "refusal": None}
    return {
        "index": choice.index,
        "message": message,
        "logprobs": logprobs,
        "finish_reason": choice.finish_reason,
    }


def _choice_deltas(choice: _Choice, params: _Params) -> list[dict[str, Any]]:
    """The `choices[0]` entries of every chunk one choice streams, in order."""

    def entry(
        delta: dict[str, Any], logprobs: Any = None, finish: str | None = None
    ) -> dict[str, Any]:
        return {
            "index": choice.index,
            "delta": delta,
            "logprobs": logprobs,
            "finish_reason": finish,
        }

    out: list[dict[str, Any]] = []
    if choice.tool_calls:
        call = choice.tool_calls[0]
        head = {**call, "index": 0, "function": {"name": call["function"]["name"], "arguments": ""}}
        out.append(
            entry({"role": "assistant", "content": None, "tool_calls": [head], "refusal": None})
        )
        for piece in pieces(call["function"]["arguments"], _ARGUMENT_PIECE):
            out.append(entry({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}))
    else:
        wants_logprobs = params.logprobs and choice.logprobs is not None
        out.append(
            entry(
                {"role": "assistant", "content": "", "refusal": None},
                {"content": [], "refusal": None} if wants_logprobs else None,
            )
        )
        position = 0
        for tokens in group(choice.tokens, _TOKENS_PER_DELTA):
            logprobs = None
            if wants_logprobs and choice.logprobs is not None:
                part = choice.logprobs[position : position + len(tokens)]
                logprobs = {"content": part, "refusal": None}
            position += len(tokens)
            out.append(entry({"content": "".join(tokens)}, logprobs))
    out.append(entry({}, None, choice.finish_reason))
    return out


def _stream_events(
    completion_id: str, params: _Params, choices: list[_Choice], usage: dict[str, Any]
) -> list[bytes]:
    def chunk(entries: list[dict[str, Any]]) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": params.model,
            "service_tier": "default",
            "system_fingerprint": SYSTEM_FINGERPRINT,
            "choices": entries,
        }
        # With include_usage every chunk carries "usage": null until the last one; without it the
        # field is absent, and no choice-less chunk is sent (code reading choices[0] relies on it).
        if params.include_usage:
            data["usage"] = None
        return data

    per_choice = [_choice_deltas(c, params) for c in choices]
    events: list[bytes] = []
    # n > 1 interleaves the choices, as the vendor does, so clients must route by index.
    for step in range(max(len(d) for d in per_choice)):
        for deltas in per_choice:
            if step < len(deltas):
                events.append(sse_data(chunk([deltas[step]])))
    if params.include_usage:
        events.append(sse_data({**chunk([]), "usage": usage}))
    events.append(b"data: [DONE]\n\n")
    return events
