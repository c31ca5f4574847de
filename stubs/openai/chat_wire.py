"""The chat completion's wire shape: a choice as a plain `choices[]` entry, or as the stream of
`chat.completion.chunk` events OpenAI sends (n > 1 interleaved, usage last when asked)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from stubs.openai.common import CREATED, SYSTEM_FINGERPRINT, group, pieces, sse_data
from vendors.requests import ChatParams

_TOKENS_PER_DELTA = 3  # "a few words" per content chunk, as the vendor streams
_ARGUMENT_PIECE = 16  # characters of tool arguments per delta


@dataclass
class ChatChoice:
    index: int
    content: str | None
    tool_calls: list[dict[str, Any]]
    finish_reason: str
    tokens: list[str]
    logprobs: list[dict[str, Any]] | None
    completion_tokens: int
    reasoning_tokens: int


def plain_choice(choice: ChatChoice, params: ChatParams) -> dict[str, Any]:
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


def _choice_deltas(choice: ChatChoice, params: ChatParams) -> list[dict[str, Any]]:
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
        # Each call opens with its id and name (the first with the role), then its arguments
        # in small pieces; parallel calls follow one another, told apart by `index`.
        for i, call in enumerate(choice.tool_calls):
            name = call["function"]["name"]
            head = {**call, "index": i, "function": {"name": name, "arguments": ""}}
            opening: dict[str, Any] = {"tool_calls": [head]}
            if i == 0:
                opening = {"role": "assistant", "content": None, **opening, "refusal": None}
            out.append(entry(opening))
            for piece in pieces(call["function"]["arguments"], _ARGUMENT_PIECE):
                out.append(entry({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}))
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


def stream_events(
    completion_id: str, params: ChatParams, choices: list[ChatChoice], usage: dict[str, Any]
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
