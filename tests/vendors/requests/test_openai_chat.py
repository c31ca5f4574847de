"""vendors.requests.openai_chat: a chat completions body read into parameters, or OpenAI's 400."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from vendors.errors import VendorRequestError
from vendors.requests.openai_chat import parse_chat

USER = [{"role": "user", "content": "hello"}]
TOOL = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}


def refused(
    body: dict[str, Any], parse: Callable[[dict[str, Any]], object] = parse_chat
) -> VendorRequestError:
    """The 400 `parse` raises for `body` (the Responses tests use it too)."""
    with pytest.raises(VendorRequestError) as raised:
        parse(body)
    assert raised.value.status == 400
    return raised.value


def test_a_plain_body_gives_the_defaults() -> None:
    params = parse_chat({"model": "gpt-4o-mini", "messages": USER})
    assert (params.model, params.n, params.stream, params.format_type) == (
        "gpt-4o-mini",
        1,
        False,
        "text",
    )
    assert params.functions == [] and params.max_tokens is None


def test_stream_usage_logprobs_and_a_named_function_are_read() -> None:
    params = parse_chat(
        {
            "model": "gpt-4o-mini",
            "messages": USER,
            "n": 2,
            "stream": True,
            "stream_options": {"include_usage": True},
            "logprobs": True,
            "top_logprobs": 3,
            "tools": [TOOL],
            "tool_choice": {"type": "function", "function": {"name": "f"}},
        }
    )
    assert (params.n, params.include_usage, params.top_logprobs) == (2, True, 3)
    assert params.named_function == "f" and [f.name for f in params.functions] == ["f"]


def test_allowed_tools_narrow_the_functions() -> None:
    other = {"type": "function", "function": {"name": "g"}}
    choice = {"type": "allowed_tools", "allowed_tools": {"mode": "required", "tools": [other]}}
    params = parse_chat(
        {"model": "m", "messages": USER, "tools": [TOOL, other], "tool_choice": choice}
    )
    assert [f.name for f in params.functions] == ["g"] and params.tool_choice == "required"


def test_the_vendors_refusals() -> None:
    assert refused({"model": "m", "messages": []}).param == "messages"
    assert refused({"model": "m", "messages": [{"role": "robot"}]}).param == "messages[0].role"
    assert refused({"model": "m", "messages": USER, "n": 0}).param == "n"
    assert refused({"model": "m", "messages": USER, "stream_options": {}}).param == "stream_options"
    json_object = {"model": "m", "messages": USER, "response_format": {"type": "json_object"}}
    assert refused(json_object).param == "messages"
    assert refused({"model": "o3", "messages": USER, "max_tokens": 5}).param == "max_tokens"


def test_a_json_schema_format_keeps_its_schema_and_name() -> None:
    fmt = {"type": "json_schema", "json_schema": {"name": "out", "schema": {"type": "object"}}}
    params = parse_chat({"model": "m", "messages": USER, "response_format": fmt})
    assert (params.format_type, params.schema_name, params.schema) == (
        "json_schema",
        "out",
        {"type": "object"},
    )
