"""vendors.requests.openai_tools: `tools` and `tool_choice` of chat completions and Responses,
read by one parser; the routes differ only where their wire formats do (where a function's name
sits, where `allowed_tools` keeps its list, which other tool and choice types each accepts), and
each route refuses a bad one with OpenAI's own 400, word for word."""

from __future__ import annotations

from typing import Any

import pytest

from vendors.errors import VendorRequestError
from vendors.requests.openai_chat import parse_chat
from vendors.requests.openai_common import EMPTY_OBJECT_SCHEMA
from vendors.requests.openai_responses import parse_responses
from vendors.requests.openai_tools import CHAT_TOOLS, RESPONSES_TOOLS, parse_tools

CHAT_F = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
CHAT_G = {"type": "function", "function": {"name": "g"}}
RESP_F = {"type": "function", "name": "f", "parameters": {"type": "object"}}
RESP_G = {"type": "function", "name": "g"}


def chat(**fields: Any) -> Any:
    return parse_chat({"model": "m", "messages": [{"role": "user", "content": "hi"}], **fields})


def responses(**fields: Any) -> Any:
    return parse_responses({"model": "m", "input": "hi", **fields})


ROUTES = {"chat": chat, "responses": responses}

# (route, fields, param, message): OpenAI's 400 for each.
REFUSALS = [
    ("chat", {"tools": {}}, "tools", "Invalid type for 'tools': expected an array."),
    ("responses", {"tools": "f"}, "tools", "Invalid type for 'tools': expected an array."),
    (
        "chat",
        {"tools": ["f"]},
        "tools[0].type",
        "Invalid value for 'tools[0].type': expected 'function' or 'custom'.",
    ),
    (
        "chat",
        {"tools": [CHAT_F, {"type": "web_search"}]},
        "tools[1].type",
        "Invalid value for 'tools[1].type': expected 'function' or 'custom'.",
    ),
    (
        "responses",
        {"tools": ["f"]},
        "tools[0].type",
        "Missing required parameter: 'tools[0].type'.",
    ),
    (
        "responses",
        {"tools": [{"type": 3}]},
        "tools[0].type",
        "Missing required parameter: 'tools[0].type'.",
    ),
    (
        "chat",
        {"tools": [{"type": "function", "name": "f"}]},  # the Responses shape on chat
        "tools[0].function.name",
        "Missing required parameter: 'tools[0].function.name'.",
    ),
    (
        "responses",
        {"tools": [CHAT_F]},  # the chat shape on Responses
        "tools[0].name",
        "Missing required parameter: 'tools[0].name'.",
    ),
    (
        "chat",
        {"tools": [{"type": "function", "function": {"name": "f", "parameters": []}}]},
        "tools[0].function.parameters",
        "Invalid type for 'tools[0].function.parameters': expected an object.",
    ),
    (
        "responses",
        {"tools": [{**RESP_F, "parameters": "x"}]},
        "tools[0].parameters",
        "Invalid type for 'tools[0].parameters': expected an object.",
    ),
    (
        "chat",
        {"tool_choice": "auto"},
        "tool_choice",
        "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are "
        "specified.",
    ),
    (
        "responses",
        {"tools": [RESP_F], "tool_choice": "always"},
        "tool_choice",
        "Invalid value: 'always'. Supported values are: 'none', 'auto', and 'required'.",
    ),
    (
        "chat",
        {"tools": [CHAT_F], "tool_choice": {"type": "function", "name": "f"}},
        "tool_choice.function.name",
        "Missing required parameter: 'tool_choice.function.name'.",
    ),
    (
        "responses",
        {"tools": [RESP_F], "tool_choice": {"type": "function", "function": {"name": "f"}}},
        "tool_choice.name",
        "Missing required parameter: 'tool_choice.name'.",
    ),
    (
        "chat",
        {"tools": [CHAT_F], "tool_choice": {"type": "allowed_tools", "tools": [CHAT_F]}},
        "tool_choice.allowed_tools.tools",
        "Missing required parameter: 'tool_choice.allowed_tools.tools'.",
    ),
    (
        "responses",
        {"tools": [RESP_F], "tool_choice": {"type": "allowed_tools", "tools": {}}},
        "tool_choice.tools",
        "Missing required parameter: 'tool_choice.tools'.",
    ),
    (
        "chat",
        {"tools": [CHAT_F], "tool_choice": {"type": "web_search"}},
        "tool_choice.type",
        "Invalid value for 'tool_choice.type': 'web_search'.",
    ),
    (
        "chat",
        {"tools": [CHAT_F], "tool_choice": {}},
        "tool_choice.type",
        "Invalid value for 'tool_choice.type': 'None'.",
    ),
]


@pytest.mark.parametrize(("route", "fields", "param", "message"), REFUSALS)
def test_each_route_refuses_with_openais_words(
    route: str, fields: dict[str, Any], param: str, message: str
) -> None:
    with pytest.raises(VendorRequestError) as refused:
        ROUTES[route](**fields)
    assert (refused.value.status, refused.value.param, refused.value.message) == (
        400,
        param,
        message,
    )


# (route, fields, the functions offered, tool_choice as read, the forced function)
READ = [
    ("chat", {}, [], None, None),
    ("chat", {"tools": [CHAT_F, CHAT_G]}, ["f", "g"], None, None),
    ("chat", {"tools": [CHAT_F, {"type": "custom", "name": "c"}]}, ["f"], None, None),
    (
        "chat",
        {"tools": [CHAT_F], "tool_choice": {"type": "function", "function": {"name": "f"}}},
        ["f"],
        {"type": "function", "function": {"name": "f"}},
        "f",
    ),
    (
        "chat",
        {
            "tools": [CHAT_F, CHAT_G],
            "tool_choice": {"type": "allowed_tools", "allowed_tools": {"tools": [CHAT_G, "x"]}},
        },
        ["g"],
        "auto",
        None,
    ),
    (
        "chat",
        {"tools": [CHAT_F], "tool_choice": {"type": "custom", "custom": {"name": "c"}}},
        ["f"],
        {"type": "custom", "custom": {"name": "c"}},
        None,
    ),
    ("responses", {"tools": [RESP_F, {"type": "web_search"}]}, ["f"], None, None),
    (
        "responses",
        {"tools": [RESP_F, RESP_G], "tool_choice": {"type": "function", "name": "g"}},
        ["f", "g"],
        {"type": "function", "name": "g"},
        "g",
    ),
    (
        "responses",
        {
            "tools": [RESP_F, RESP_G],
            "tool_choice": {"type": "allowed_tools", "mode": "required", "tools": [RESP_F, 1]},
        },
        ["f"],
        "required",
        None,
    ),
    (
        "responses",  # a built-in tool's choice: accepted, nothing forced
        {"tools": [RESP_F], "tool_choice": {"type": "web_search_preview"}},
        ["f"],
        {"type": "web_search_preview"},
        None,
    ),
    ("responses", {"tools": [RESP_F], "tool_choice": "required"}, ["f"], "required", None),
]


@pytest.mark.parametrize(("route", "fields", "names", "choice", "named"), READ)
def test_each_route_reads_its_offer(
    route: str, fields: dict[str, Any], names: list[str], choice: Any, named: str | None
) -> None:
    params = ROUTES[route](**fields)
    assert [f.name for f in params.functions] == names
    assert (params.tool_choice, params.named_function) == (choice, named)


def test_a_function_without_parameters_takes_any_object() -> None:
    offer = parse_tools({"tools": [CHAT_G]}, CHAT_TOOLS)
    assert offer.functions[0].parameters == EMPTY_OBJECT_SCHEMA
    offer = parse_tools({"tools": [RESP_F]}, RESPONSES_TOOLS)
    assert offer.functions[0].parameters == {"type": "object"}
