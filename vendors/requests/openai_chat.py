"""The request side of POST /v1/chat/completions: the checks OpenAI makes (its 400s, word for
word) and the parameters the stub answers by."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vendors.errors import VendorRequestError
from vendors.models import is_reasoning_model
from vendors.requests.openai_common import (
    EMPTY_OBJECT_SCHEMA,
    FunctionSpec,
    check_request,
    check_top_logprobs,
    max_output_tokens,
    mentions_json,
    stream_flag,
)
from vendors.requests.openai_options import check_chat_options, check_stream_options
from vendors.requests.openai_tools import CHAT_TOOLS, parse_tools

_ROLES = ("system", "assistant", "user", "function", "tool", "developer")


@dataclass
class ChatParams:
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


def parse_chat(body: dict[str, Any], per_model: bool = True) -> ChatParams:
    model = check_request(body, lambda b: _check_messages(b.get("messages")), per_model)
    if per_model and is_reasoning_model(model) and body.get("max_tokens") is not None:
        raise VendorRequestError(
            400,
            "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
            "'max_completion_tokens' instead.",
            "max_tokens",
        )
    if body.get("max_tokens") is not None and body.get("max_completion_tokens") is not None:
        # Refused by the vendor whatever the model (observed: code invalid_parameter_combination),
        # so refused here in every mode: record mode must not pass what live mode cannot send.
        raise VendorRequestError(
            400,
            "Setting 'max_tokens' and 'max_completion_tokens' at the same time is not supported.",
            "max_tokens",
            "invalid_parameter_combination",
        )
    check_chat_options(body)
    params = ChatParams(model=model, stream=stream_flag(body), effort=body.get("reasoning_effort"))
    params.max_tokens = max_output_tokens(body, ("max_completion_tokens", "max_tokens"))
    n = body.get("n", 1)
    if n is None:
        n = 1
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 128:
        raise VendorRequestError(400, "Invalid 'n': expected an integer between 1 and 128.", "n")
    params.n = n
    options = body.get("stream_options")
    if options is not None:
        if not params.stream:
            raise VendorRequestError(
                400,
                "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
                "stream_options",
            )
        if not isinstance(options, dict):
            raise VendorRequestError(
                400, "Invalid type for 'stream_options': expected an object.", "stream_options"
            )
        check_stream_options(options)
        params.include_usage = options.get("include_usage") is True
    logprobs = body.get("logprobs")
    if logprobs is not None and not isinstance(logprobs, bool):
        raise VendorRequestError(
            400, "Invalid type for 'logprobs': expected a boolean.", "logprobs"
        )
    params.logprobs = bool(logprobs)
    params.top_logprobs = check_top_logprobs(body, params.logprobs)
    _parse_tools(body, params)
    _parse_response_format(body, params)
    return params


def _check_messages(messages: Any) -> None:
    if messages is None:
        raise VendorRequestError(400, "Missing required parameter: 'messages'.", "messages")
    if not isinstance(messages, list):
        raise VendorRequestError(
            400, "Invalid type for 'messages': expected an array of objects.", "messages"
        )
    if not messages:
        raise VendorRequestError(
            400,
            "Invalid 'messages': empty array. Expected an array with minimum length 1, but "
            "got an empty array instead.",
            "messages",
        )
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            raise VendorRequestError(
                400, f"Invalid type for 'messages[{i}]': expected an object.", f"messages[{i}]"
            )
        role = message.get("role")
        if role is None:
            raise VendorRequestError(
                400, f"Missing required parameter: 'messages[{i}].role'.", f"messages[{i}].role"
            )
        if role not in _ROLES:
            raise VendorRequestError(
                400,
                f"Invalid value: '{role}'. Supported values are: 'system', 'assistant', "
                "'user', 'function', 'tool', and 'developer'.",
                f"messages[{i}].role",
            )


def _parse_tools(body: dict[str, Any], params: ChatParams) -> None:
    offer = parse_tools(body, CHAT_TOOLS)
    params.functions, params.tool_choice = offer.functions, offer.tool_choice
    params.named_function = offer.named_function


def _parse_response_format(body: dict[str, Any], params: ChatParams) -> None:
    fmt = body.get("response_format")
    if fmt is None:
        return
    if not isinstance(fmt, dict) or fmt.get("type") not in ("text", "json_object", "json_schema"):
        raise VendorRequestError(
            400,
            "Invalid value for 'response_format.type': supported values are 'text', "
            "'json_object' and 'json_schema'.",
            "response_format.type",
        )
    params.format_type = fmt["type"]
    if fmt["type"] == "json_object" and not mentions_json(body.get("messages")):
        raise VendorRequestError(
            400,
            "'messages' must contain the word 'json' in some form, to use 'response_format' "
            "of type 'json_object'.",
            "messages",
        )
    if fmt["type"] == "json_schema":
        spec = fmt.get("json_schema")
        if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
            raise VendorRequestError(
                400,
                "Missing required parameter: 'response_format.json_schema.name'.",
                "response_format.json_schema.name",
            )
        schema = spec.get("schema", EMPTY_OBJECT_SCHEMA)
        if not isinstance(schema, dict):
            raise VendorRequestError(
                400,
                "Invalid type for 'response_format.json_schema.schema': expected an object.",
                "response_format.json_schema.schema",
            )
        params.schema = schema
        params.schema_name = spec["name"]


def check_chat(body: dict[str, Any]) -> None:
    """The checks of a chat completions body that hold whatever the model (proxy.flow.intake runs
    them in both modes, before live mode's pinned-sampling rewrite)."""
    parse_chat(body, per_model=False)
