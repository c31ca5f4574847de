"""OpenAI's `tools` and `tool_choice`, read one way for chat completions and Responses.

Both routes offer function tools (checked by openai_common.parse_function_tools), refuse a
`tool_choice` without tools, force one function by name (`type: function`) and narrow the
offer with `type: allowed_tools` and its `mode`. Their wire formats differ in four places only,
each a field of `ToolWire`: chat nests a function's name (and its parameters) under `function`
in a tool, a forced choice and an allowed entry alike, Responses keeps it at the top; chat
keeps allowed_tools' list and mode under `allowed_tools`, Responses beside `type`; chat offers
only `function` and `custom` tools, Responses any typed tool (its built-ins); chat refuses a
choice type it does not know, Responses accepts any (a built-in tool's choice)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vendors.errors import VendorRequestError
from vendors.requests.openai_common import FunctionSpec, parse_function_tools


@dataclass(frozen=True)
class ToolWire:
    #: The key a function's name and parameters sit under, in a tool, a forced choice and an
    #: allowed entry ("function" on chat), or None where they sit at the top (Responses).
    nest: str | None
    #: The key holding allowed_tools' `tools` and `mode` inside the choice, or None: beside type.
    allowed_in: str | None
    #: The tool types the route accepts, or None for any string (Responses' built-in tools).
    tool_types: tuple[str, ...] | None
    #: The choice types accepted besides `function` and `allowed_tools`, or None for any.
    other_choices: tuple[str, ...] | None


CHAT_TOOLS = ToolWire(
    nest="function", allowed_in="allowed_tools", tool_types=("function", "custom"),
    other_choices=("custom",),
)  # fmt: skip


RESPONSES_TOOLS = ToolWire(nest=None, allowed_in=None, tool_types=None, other_choices=None)


@dataclass
class ToolOffer:
    functions: list[FunctionSpec]
    tool_choice: Any  # as sent, or allowed_tools' mode once the offer is narrowed
    named_function: str | None = None  # the function a `type: function` choice forces


def parse_tools(body: dict[str, Any], wire: ToolWire) -> ToolOffer:
    """The functions `body` offers and what its tool_choice asks, or OpenAI's 400."""
    functions, choice = parse_function_tools(body, lambda i, tool: _function_of(wire, i, tool))
    offer = ToolOffer(functions, choice)
    if not isinstance(choice, dict):
        return offer
    kind = choice.get("type")
    if kind == "function":
        named = _named(wire, choice)
        if named is None:
            where = _path("tool_choice", wire.nest, "name")
            raise VendorRequestError(400, f"Missing required parameter: '{where}'.", where)
        offer.named_function = named
    elif kind == "allowed_tools":
        allowed = choice if wire.allowed_in is None else choice.get(wire.allowed_in)
        if not isinstance(allowed, dict) or not isinstance(allowed.get("tools"), list):
            where = _path("tool_choice", wire.allowed_in, "tools")
            raise VendorRequestError(400, f"Missing required parameter: '{where}'.", where)
        names = {_named(wire, entry) for entry in allowed["tools"]}
        offer.functions = [f for f in functions if f.name in names]
        offer.tool_choice = allowed.get("mode", "auto")
    elif wire.other_choices is not None and kind not in wire.other_choices:
        raise VendorRequestError(
            400, f"Invalid value for 'tool_choice.type': '{kind}'.", "tool_choice.type"
        )
    return offer


def _function_of(wire: ToolWire, i: int, tool: Any) -> tuple[dict[str, Any], str] | None:
    """tools[i]'s function (its name and parameters) and where it sits, or None for a tool
    that is offered but never forced by the stub (custom, built-in)."""
    kind = tool.get("type") if isinstance(tool, dict) else None
    if wire.tool_types is None and not isinstance(kind, str):
        raise VendorRequestError(
            400, f"Missing required parameter: 'tools[{i}].type'.", f"tools[{i}].type"
        )
    if wire.tool_types is not None and kind not in wire.tool_types:
        expected = " or ".join(f"'{t}'" for t in wire.tool_types)
        raise VendorRequestError(
            400, f"Invalid value for 'tools[{i}].type': expected {expected}.", f"tools[{i}].type"
        )
    if kind != "function":
        return None
    function = tool if wire.nest is None else tool.get(wire.nest)
    where = _path(f"tools[{i}]", wire.nest)
    if not isinstance(function, dict) or not isinstance(function.get("name"), str):
        raise VendorRequestError(
            400, f"Missing required parameter: '{where}.name'.", f"{where}.name"
        )
    return function, where


def _named(wire: ToolWire, entry: Any) -> str | None:
    """The function name a choice or an allowed entry gives, where the route puts it."""
    holder = entry if wire.nest is None or not isinstance(entry, dict) else entry.get(wire.nest)
    name = holder.get("name") if isinstance(holder, dict) else None
    return name if isinstance(name, str) else None


def _path(*parts: str | None) -> str:
    return ".".join(p for p in parts if p)
