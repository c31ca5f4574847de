"""Pieces the two OpenAI text routes share: request checks, sampling checks, tokenizing, logprobs,
forced tools and structured output. Chat completions and Responses wrap them in their own wire
shapes."""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from stubs.request import StubRequest
from stubs.schema.instance import instance_for
from vendors.errors import StubRequestError
from vendors.models import is_reasoning_model

# Fixed so the same request gives the same bytes on every machine and every day.
CREATED = 1735689600
SYSTEM_FINGERPRINT = "fp_5t0b5e1f2a"

# Reasoning spend scales with effort; "none" (gpt-5.1 and later) thinks not at all.
_EFFORT_SCALE = {
    "none": 0,
    "minimal": 1,
    "low": 2,
    "medium": 4,
    "high": 8,
    "xhigh": 16,
    "max": 32,
}

# Alternatives offered in top_logprobs; rotated per token so neighbouring tokens differ.
_ALTERNATIVES = (
    " the",
    " a",
    " I",
    " and",
    " to",
    " of",
    " it",
    " that",
    " is",
    ".",
    ",",
    " in",
    " you",
    " for",
    " on",
    " with",
    " this",
    " be",
    " as",
    " at",
    " not",
    " but",
)
# A reranker that asks for a yes/no reply reads the other answer's logprob too.
EMPTY_OBJECT_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}
_OPPOSITES = {"yes": "no", "no": "yes", "true": "false", "false": "true"}

_TOKEN_RE = re.compile(r"\s*\w+|\s*[^\w\s]+|\s+")


def dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


def sse_data(obj: Any) -> bytes:
    """One chat-completions SSE event (no `event:` line, as OpenAI sends them)."""
    return b"data: " + dumps(obj) + b"\n\n"


def seed(req: StubRequest, salt: str) -> bytes:
    """32 bytes derived from the request digest, independent per salt."""
    return hashlib.sha256(req.digest + b"\x00" + salt.encode()).digest()


def variant(req: StubRequest, index: int) -> StubRequest:
    """The request as seen by choice `index`: choice 0 is the request itself, so n=1 and the first
    of n choices agree; later choices get their own digest and so their own reply."""
    if index == 0:
        return req
    return replace(req, digest=seed(req, f"choice:{index}"))


def require_model(body: dict[str, Any]) -> str:
    model = body.get("model")
    if model is None:
        raise StubRequestError(400, "Missing required parameter: 'model'.", "model")
    if not isinstance(model, str) or not model:
        raise StubRequestError(400, "Invalid type for 'model': expected a string.", "model")
    return model


def check_request(
    body: dict[str, Any], check_prompt: Callable[[dict[str, Any]], None], per_model: bool = True
) -> str:
    """The checks both routes open with, in the vendor's order (the first failing one is the error
    the caller sees): the model, then the route's own prompt fields, then sampling. Returns the
    model. `per_model=False` leaves out the rules that depend on the model, which the live
    proxy's pinned-sampling rewrite may still satisfy (proxy.live.sampling)."""
    model = require_model(body)
    check_prompt(body)
    check_sampling(body, model if per_model else None)
    return model


def stream_flag(body: dict[str, Any]) -> bool:
    value = body.get("stream")
    if value is None:
        return False
    if not isinstance(value, bool):
        raise StubRequestError(
            400,
            "Invalid type for 'stream': expected a boolean, but got another type instead.",
            "stream",
        )
    return value


def number_text(value: float) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def check_sampling(body: dict[str, Any], model: str | None) -> None:
    """Refuse temperature/top_p the way OpenAI does: type and range for every model, and any
    non-default value for reasoning models (the trap a pinned-sampling rewrite falls into; not
    checked when `model` is None)."""
    for name, maximum in (("temperature", 2), ("top_p", 1)):
        value = body.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise StubRequestError(
                400,
                f"Invalid type for '{name}': expected a decimal, but got another type instead.",
                name,
            )
        if value < 0 or value > maximum:
            side = "below minimum" if value < 0 else "above maximum"
            bound = ">= 0" if value < 0 else f"<= {maximum}"
            raise StubRequestError(
                400,
                f"Invalid '{name}': decimal {side} value. Expected a value {bound}, but got "
                f"{number_text(value)} instead.",
                name,
            )
        if model is not None and is_reasoning_model(model) and value != 1:
            raise StubRequestError(
                400,
                f"Unsupported value: '{name}' does not support {number_text(value)} with this "
                "model. Only the default (1) value is supported.",
                name,
            )


def reasoning_tokens(req: StubRequest, model: str, effort: Any) -> int:
    """Thinking tokens a reasoning model spends: deterministic, scaled by effort, 0 otherwise."""
    if not is_reasoning_model(model):
        return 0
    scale = _EFFORT_SCALE.get(effort if isinstance(effort, str) else "medium", 4)
    return scale * (16 + req.pick("reasoning_tokens", 48))


def split_tokens(text: str) -> list[str]:
    """Word-ish tokens with their leading whitespace, punctuation apart; joined, they give back
    `text` exactly."""
    return _TOKEN_RE.findall(text)


def group(tokens: list[str], size: int) -> list[list[str]]:
    return [tokens[i : i + size] for i in range(0, len(tokens), size)]


def pieces(text: str, size: int) -> list[str]:
    """`text` cut into pieces of `size` characters, as tool arguments stream."""
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _fraction(data: bytes) -> float:
    return int.from_bytes(data[:8], "big") / 2**64


def token_logprobs(
    req: StubRequest, salt: str, tokens: list[str], top: int
) -> list[dict[str, Any]]:
    """Per-token logprob entries. The chosen token has probability in (0.5, 1), so it is always
    the most likely; each alternative gets a shrinking share of what is left, so the top list is
    sorted descending and its probabilities sum below 1, like a real distribution."""
    entries: list[dict[str, Any]] = []
    for position, token in enumerate(tokens):
        h = seed(req, f"logprobs:{salt}:{position}")
        p_chosen = 0.5 + 0.495 * _fraction(h)
        candidates = [(token, p_chosen)]
        rest = 1.0 - p_chosen
        share = 0.6
        for i, alt in enumerate(_alternatives(token, h[8])[: max(top - 1, 0)]):
            jitter = 0.8 + 0.2 * _fraction(hashlib.sha256(h + bytes([i])).digest())
            candidates.append((alt, rest * share * jitter))
            share *= 0.4
        listed = [_entry(t, p) for t, p in candidates[:top]]
        entries.append({**_entry(token, p_chosen), "top_logprobs": listed})
    return entries


def _alternatives(token: str, rotate: int) -> list[str]:
    stripped = token.strip()
    lead = token[: len(token) - len(token.lstrip())]
    first: list[str] = []
    opposite = _OPPOSITES.get(stripped.lower())
    if opposite is not None:
        first.append(lead + (opposite.capitalize() if stripped[:1].isupper() else opposite))
    start = rotate % len(_ALTERNATIVES)
    rotated = _ALTERNATIVES[start:] + _ALTERNATIVES[:start]
    seen = {token, *first}
    return first + [a for a in rotated if a not in seen]


def _entry(token: str, p: float) -> dict[str, Any]:
    return {"token": token, "logprob": round(math.log(p), 6), "bytes": list(token.encode())}


def check_top_logprobs(body: dict[str, Any], enabled: bool) -> int:
    value = body.get("top_logprobs")
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 20:
        raise StubRequestError(
            400, "Invalid 'top_logprobs': expected an integer between 0 and 20.", "top_logprobs"
        )
    if value and not enabled:
        raise StubRequestError(
            400,
            "Invalid value for 'top_logprobs': 'logprobs' must be set to true to use "
            "'top_logprobs'.",
            "top_logprobs",
        )
    return value


@dataclass(frozen=True)
class FunctionSpec:
    name: str
    parameters: dict[str, Any]
    description: str = ""


def forced_function(
    req: StubRequest, salt: str, functions: list[FunctionSpec], tool_choice: Any, named: str | None
) -> FunctionSpec | None:
    """The function a request forces, or None when the model may answer in text.

    `named` is the function a dict tool_choice names (already pulled out of the route's own
    shape); "required" picks one deterministically among the request's functions."""
    if named is not None:
        for spec in functions:
            if spec.name == named:
                return spec
        raise StubRequestError(
            400,
            f"Invalid value for 'tool_choice': function '{named}' not found in 'tools'.",
            "tool_choice",
        )
    if tool_choice == "required" and functions:
        return functions[req.pick(f"tool:{salt}", len(functions))]
    return None


# Checks one `tools[i]` in the route's own shape; returns the function object (the one holding
# `name` and `parameters`) and its path for messages, or None for a tool never forced.
FunctionOf = Callable[[int, Any], tuple[dict[str, Any], str] | None]


def parse_function_tools(
    body: dict[str, Any], function_of: FunctionOf
) -> tuple[list[FunctionSpec], Any]:
    """The `tools` array's functions and the `tool_choice` (checked against the tools), checked
    as both routes check them, tool by tool; `function_of` checks the parts whose shape differs."""
    tools = body.get("tools")
    if tools is not None and not isinstance(tools, list):
        raise StubRequestError(400, "Invalid type for 'tools': expected an array.", "tools")
    functions = []
    for i, tool in enumerate(tools or []):
        found = function_of(i, tool)
        if found is None:
            continue
        function, where = found
        parameters = function.get("parameters")
        if parameters is not None and not isinstance(parameters, dict):
            raise StubRequestError(
                400,
                f"Invalid type for '{where}.parameters': expected an object.",
                f"{where}.parameters",
            )
        description = function.get("description")
        functions.append(
            FunctionSpec(
                function["name"],
                parameters or EMPTY_OBJECT_SCHEMA,
                description if isinstance(description, str) else "",
            )
        )
    choice = body.get("tool_choice")
    check_tool_choice_has_tools(choice, tools)
    return functions, choice


def check_tool_choice_has_tools(tool_choice: Any, tools: Any) -> None:
    if tool_choice is not None and not tools:
        raise StubRequestError(
            400,
            "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are "
            "specified.",
            "tool_choice",
        )
    if isinstance(tool_choice, str) and tool_choice not in ("none", "auto", "required"):
        raise StubRequestError(
            400,
            f"Invalid value: '{tool_choice}'. Supported values are: 'none', 'auto', and "
            "'required'.",
            "tool_choice",
        )


def schema_json(schema: dict[str, Any], data: bytes) -> str:
    """Compact JSON text valid for `schema`, as the model sends tool arguments and structured
    output."""
    return json.dumps(instance_for(schema, data), separators=(",", ":"))


def mentions_json(value: Any) -> bool:
    """OpenAI refuses json_object output unless the prompt says "json" somewhere."""
    if isinstance(value, str):
        return "json" in value.lower()
    if isinstance(value, dict):
        return any(mentions_json(v) for v in value.values())
    if isinstance(value, list):
        return any(mentions_json(v) for v in value)
    return False
