"""The request side of POST /v1/responses: the checks OpenAI makes (its 400s, word for word) and
the parameters the stub answers by."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vendors.errors import VendorRequestError
from vendors.requests.openai_common import (
    FunctionSpec,
    check_request,
    check_top_logprobs,
    mentions_json,
    stream_flag,
)
from vendors.requests.openai_options import check_responses_options
from vendors.requests.openai_tools import RESPONSES_TOOLS, parse_tools

_INPUT_ROLES = ("user", "assistant", "system", "developer")
_LOGPROBS_INCLUDE = "message.output_text.logprobs"


@dataclass
class ResponsesParams:
    model: str
    stream: bool = False
    functions: list[FunctionSpec] = field(default_factory=list)
    tool_choice: Any = None
    named_function: str | None = None
    text_format: dict[str, Any] = field(default_factory=lambda: {"type": "text"})
    effort: Any = None
    top_logprobs: int | None = None  # None: the caller did not ask for logprobs


def parse_responses(body: dict[str, Any], per_model: bool = True) -> ResponsesParams:
    model = check_request(body, _check_prompt, per_model)
    reasoning = body.get("reasoning")
    if reasoning is not None and not isinstance(reasoning, dict):
        raise VendorRequestError(
            400, "Invalid type for 'reasoning': expected an object.", "reasoning"
        )
    check_responses_options(body)
    params = ResponsesParams(
        model=model, stream=stream_flag(body), effort=(reasoning or {}).get("effort")
    )
    include = body.get("include") or []
    if not isinstance(include, list):
        raise VendorRequestError(400, "Invalid type for 'include': expected an array.", "include")
    top = check_top_logprobs(body, True)
    if _LOGPROBS_INCLUDE in include:
        params.top_logprobs = top
    _parse_tools(body, params)
    _parse_text(body, params)
    return params


def _check_prompt(body: dict[str, Any]) -> None:
    _check_input(body.get("input"))
    instructions = body.get("instructions")
    if instructions is not None and not isinstance(instructions, str):
        raise VendorRequestError(
            400, "Invalid type for 'instructions': expected a string.", "instructions"
        )


def _check_input(value: Any) -> None:
    if value is None:
        raise VendorRequestError(400, "Missing required parameter: 'input'.", "input")
    if isinstance(value, str):
        return
    if not isinstance(value, list):
        raise VendorRequestError(
            400, "Invalid type for 'input': expected a string or an array of input items.", "input"
        )
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            raise VendorRequestError(
                400, f"Invalid type for 'input[{i}]': expected an object.", f"input[{i}]"
            )
        role = item.get("role")
        if role is None and not isinstance(item.get("type"), str):
            raise VendorRequestError(
                400, f"Missing required parameter: 'input[{i}].role'.", f"input[{i}].role"
            )
        if role is not None and role not in _INPUT_ROLES:
            raise VendorRequestError(
                400,
                f"Invalid value: '{role}'. Supported values are: 'user', 'assistant', "
                "'system', and 'developer'.",
                f"input[{i}].role",
            )


def _parse_tools(body: dict[str, Any], params: ResponsesParams) -> None:
    offer = parse_tools(body, RESPONSES_TOOLS)
    params.functions, params.tool_choice = offer.functions, offer.tool_choice
    params.named_function = offer.named_function


def _parse_text(body: dict[str, Any], params: ResponsesParams) -> None:
    text = body.get("text")
    if text is None:
        return
    if not isinstance(text, dict):
        raise VendorRequestError(400, "Invalid type for 'text': expected an object.", "text")
    fmt = text.get("format")
    if fmt is None:
        return
    if not isinstance(fmt, dict) or fmt.get("type") not in ("text", "json_object", "json_schema"):
        raise VendorRequestError(
            400,
            "Invalid value for 'text.format.type': supported values are 'text', "
            "'json_object' and 'json_schema'.",
            "text.format.type",
        )
    if fmt["type"] == "json_schema":
        if not isinstance(fmt.get("name"), str):
            raise VendorRequestError(
                400, "Missing required parameter: 'text.format.name'.", "text.format.name"
            )
        if not isinstance(fmt.get("schema", {}), dict):
            raise VendorRequestError(
                400,
                "Invalid type for 'text.format.schema': expected an object.",
                "text.format.schema",
            )
    if fmt["type"] == "json_object" and not mentions_json(
        [body.get("input"), body.get("instructions")]
    ):
        raise VendorRequestError(
            400,
            "Response input messages must contain the word 'json' in some form to use "
            "'text.format' of type 'json_object'.",
            "input",
        )
    params.text_format = fmt


def check_responses(body: dict[str, Any]) -> None:
    """The checks of a Responses body that hold whatever the model (proxy.flow.intake runs them in
    both modes, before live mode's pinned-sampling rewrite)."""
    parse_responses(body, per_model=False)
