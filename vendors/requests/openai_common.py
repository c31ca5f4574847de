"""Checks the two OpenAI text routes share (chat completions and Responses): the model, sampling,
streaming, logprobs, function tools and tool_choice, json_object's "json", the output limit.
OpenAI's 400s, word for word; the stubs answer by what these return."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from vendors.errors import VendorRequestError
from vendors.models import is_reasoning_model

# A function's parameters when a tool names none.
EMPTY_OBJECT_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


def require_model(body: dict[str, Any]) -> str:
    model = body.get("model")
    if model is None:
        raise VendorRequestError(400, "Missing required parameter: 'model'.", "model")
    if not isinstance(model, str) or not model:
        raise VendorRequestError(400, "Invalid type for 'model': expected a string.", "model")
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
        raise VendorRequestError(
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
            raise VendorRequestError(
                400,
                f"Invalid type for '{name}': expected a decimal, but got another type instead.",
                name,
            )
        if value < 0 or value > maximum:
            side = "below minimum" if value < 0 else "above maximum"
            bound = ">= 0" if value < 0 else f"<= {maximum}"
            raise VendorRequestError(
                400,
                f"Invalid '{name}': decimal {side} value. Expected a value {bound}, but got "
                f"{number_text(value)} instead.",
                name,
            )
        if model is not None and is_reasoning_model(model) and value != 1:
            raise VendorRequestError(
                400,
                f"Unsupported value: '{name}' does not support {number_text(value)} with this "
                "model. Only the default (1) value is supported.",
                name,
            )


def check_top_logprobs(body: dict[str, Any], enabled: bool) -> int:
    value = body.get("top_logprobs")
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 20:
        raise VendorRequestError(
            400, "Invalid 'top_logprobs': expected an integer between 0 and 20.", "top_logprobs"
        )
    if value and not enabled:
        raise VendorRequestError(
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
        raise VendorRequestError(400, "Invalid type for 'tools': expected an array.", "tools")
    functions = []
    for i, tool in enumerate(tools or []):
        found = function_of(i, tool)
        if found is None:
            continue
        function, where = found
        parameters = function.get("parameters")
        if parameters is not None and not isinstance(parameters, dict):
            raise VendorRequestError(
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
        raise VendorRequestError(
            400,
            "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are "
            "specified.",
            "tool_choice",
        )
    if isinstance(tool_choice, str) and tool_choice not in ("none", "auto", "required"):
        raise VendorRequestError(
            400,
            f"Invalid value: '{tool_choice}'. Supported values are: 'none', 'auto', and "
            "'required'.",
            "tool_choice",
        )


def mentions_json(value: Any) -> bool:
    """OpenAI refuses json_object output unless the prompt says "json" somewhere."""
    if isinstance(value, str):
        return "json" in value.lower()
    if isinstance(value, dict):
        return any(mentions_json(v) for v in value.values())
    if isinstance(value, list):
        return any(mentions_json(v) for v in value)
    return False


def max_output_tokens(body: dict[str, Any], names: tuple[str, ...]) -> int | None:
    """The first of `names` the body sets to an integer (the request checks vetted its type)."""
    for name in names:
        value = body.get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            return max(value, 0)
    return None
