"""POST /v1/chat/completions in record mode: plain and streamed, n choices, logprobs, forced tool
calls and structured output, in OpenAI's exact wire shape (openai/types/chat/)."""

from __future__ import annotations

from collections.abc import Callable

from stubs.formats import cut_to_tokens, json_object_reply, text_reply
from stubs.openai.chat_wire import ChatChoice, plain_choice, stream_events
from stubs.openai.common import (
    CREATED,
    SYSTEM_FINGERPRINT,
    dumps,
    reasoning_tokens,
    seed,
    split_tokens,
    token_logprobs,
    variant,
)
from stubs.openai.tools import functions_to_call
from stubs.request import StubRequest
from stubs.rules import StubContext
from stubs.schema import structured_json
from vendors.reply import Usage, VendorReply
from vendors.requests import ChatParams, parse_chat
from vendors.tokens import estimate_input_tokens, estimate_tokens

# A choice's thinking tokens, for a route whose models think on other terms than OpenAI's
# reasoning models (Anthropic's compatibility layer: stubs.anthropic.compat).
ThinkingTokens = Callable[[StubRequest], int]


def chat_completions(
    req: StubRequest, ctx: StubContext, thinking: ThinkingTokens | None = None
) -> VendorReply:
    params = parse_chat(req.body)
    choices = [_choice(req, ctx, params, i, thinking) for i in range(params.n)]
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
        return VendorReply(
            status=200,
            chunks=stream_events(completion_id, params, choices, usage),
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
        "choices": [plain_choice(c, params) for c in choices],
        "usage": usage,
        "service_tier": "default",
        "system_fingerprint": SYSTEM_FINGERPRINT,
    }
    return VendorReply(status=200, chunks=[dumps(body)], model=params.model, usage=harness_usage)


def _choice(
    req: StubRequest,
    ctx: StubContext,
    params: ChatParams,
    index: int,
    think: ThinkingTokens | None = None,
) -> ChatChoice:
    vreq = variant(req, index)
    if think is not None:
        thinking = think(vreq)
    else:
        thinking = reasoning_tokens(vreq, params.model, params.effort)
    called = functions_to_call(
        vreq, ctx.book, params.functions, params.tool_choice, params.named_function
    )
    if called:
        calls = []
        spent = thinking
        for i, (function, focus) in enumerate(called):
            arguments = structured_json(
                vreq,
                ctx.book,
                function.parameters,
                function.name,
                seed(vreq, "arguments:" + function.name),
                focus,
            )
            calls.append(
                {
                    "id": "call_" + vreq.token_id("call" if i == 0 else f"call:{i}"),
                    "type": "function",
                    "function": {"name": function.name, "arguments": arguments},
                }
            )
            spent += estimate_tokens(function.name + arguments)
        return ChatChoice(index, None, calls, "tool_calls", [], None, spent, thinking)
    if params.format_type == "json_schema":
        text = structured_json(
            vreq, ctx.book, params.schema, params.schema_name, seed(vreq, "response_format")
        )
    elif params.format_type == "json_object":
        text = json_object_reply(vreq, ctx.book, seed(vreq, "response_format"))
    else:
        text = text_reply(vreq, ctx.book)
    # The visible answer gets what max_tokens leaves after thinking; a cut answer is exactly
    # that many tokens, and its logprobs cover the same tokens as its text.
    room = None if params.max_tokens is None else max(params.max_tokens - thinking, 0)
    text, tokens, written, cut = cut_to_tokens(text, split_tokens(text), room)
    logprobs = (
        token_logprobs(vreq, "content", tokens, params.top_logprobs) if params.logprobs else None
    )
    spent = written + thinking
    return ChatChoice(
        index, text, [], "length" if cut else "stop", tokens, logprobs, spent, thinking
    )
