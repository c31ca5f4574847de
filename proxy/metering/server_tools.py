"""Server-side tools: their per-use fees before a call (the worst case) and after (the uses the
reply reports), by the price table's `[tool_fees]` (wire-formats.md, trap 11).

Before: every tool a request offers is classified. Tools the client runs (functions, bash, text
editor, computer, memory, ...) bill only tokens. A server tool needs a fee in the table (else the
call is refused: never booked at 0) and a bound on its uses: Anthropic's `max_uses` per tool,
OpenAI Responses' `max_tool_calls` (its limit on built-in tool calls per response). A counted tool
without one is refused with a message that says to set it. Tools billed by container time
(Anthropic code execution, OpenAI code interpreter) are not in usage, so they are booked once per
call that offers them, whatever the reply says. Any server tool also brings in content billed as
input, so the call is reserved at the model's full input window (proxy.metering.unbounded), once per
sampling iteration: the vendor samples the model again after each tool use, and every iteration
bills its whole prompt. Iterations are bounded by the uses (max_uses, max_tool_calls), and for
Anthropic by its server-side loop limit (`ANTHROPIC_LOOP_LIMIT`).

After: Anthropic reports `usage.server_tool_use.<tool>_requests`; its `server_tool_use` content
blocks are counted too and the larger figure wins. OpenAI reports each hosted call as an output
item (`web_search_call`, ...). A use of a tool the table cannot price makes the call billed at its
reservation, flagged (proxy.metering.billing.booked_tool_uses).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from ledger.prices import PriceTable

# Anthropic-defined tools that the client executes (tokens only).
_ANTHROPIC_CLIENT = ("custom", "bash", "text_editor", "computer", "memory")
# Anthropic's server-side sampling loop stops after this many iterations and returns
# stop_reason "pause_turn" (https://platform.claude.com/docs/en/agents-and-tools/tool-use/
# web-search-tool, "pause_turn"): the bound on a turn whose tools have no max_uses.
ANTHROPIC_LOOP_LIMIT = 10
# Anthropic server tools with no fee of their own (their content is billed as input).
_ANTHROPIC_FREE = frozenset({"mcp_toolset"})
# Billed per container, not per reported use: booked once per call that offers them.
PER_CALL = frozenset({"anthropic.code_execution", "openai.code_interpreter"})
# Server tool names in Anthropic `server_tool_use` blocks, as fee keys.
_ANTHROPIC_BLOCK_NAMES = {
    "web_search": "anthropic.web_search",
    "web_fetch": "anthropic.web_fetch",
    "code_execution": "anthropic.code_execution",
    "bash_code_execution": "anthropic.code_execution",
    "text_editor_code_execution": "anthropic.code_execution",
}
_OPENAI_CLIENT = frozenset({"function", "custom", "local_shell", "apply_patch"})
_OPENAI_FREE = frozenset({"mcp"})
# Responses output items of hosted tool calls, as fee keys; other `*_call` items run client-side.
_OPENAI_ITEMS = {
    "web_search_call": "openai.web_search",
    "file_search_call": "openai.file_search",
    "code_interpreter_call": "openai.code_interpreter",
    "image_generation_call": "openai.image_generation",
}
_OPENAI_CLIENT_ITEMS = frozenset(
    {
        "function_call",
        "custom_tool_call",
        "local_shell_call",
        "apply_patch_call",
        "computer_call",
        "mcp_call",
    }
)


@dataclass
class ToolPlan:
    """The server tools one request offers, and the most their fees can come to."""

    offered: list[str] = field(default_factory=list)  # fee keys
    worst_fee: Decimal = Decimal(0)
    server_side: bool = False  # some tool runs at the vendor (fee or not): it samples again
    iterations: int = 1  # the most times the vendor may sample the model in this one call
    refusal: str | None = None  # why the call cannot go out, as the vendor error's message
    param: str | None = None


def _base_type(kind: str) -> str:
    # "web_search_20250305" -> "web_search"; "web_search_preview_2025_03_11" -> "web_search".
    parts = kind.split("_")
    while parts and parts[-1].isdigit():
        parts.pop()
    return "_".join(parts)


def _limit(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def _unpriced(plan: ToolPlan, key: str, param: str) -> ToolPlan:
    plan.refusal = (
        f"The harness proxy cannot price server tool {key.split('.', 1)[1]!r}: the price table "
        "has no fee for it, and a fee booked at 0 would be under-counted. Remove the tool, or "
        "add its fee to a price table's [tool_fees] and pass it with --prices."
    )
    plan.param = param
    return plan


def plan_tools(route: str, body: dict[str, Any], table: PriceTable) -> ToolPlan:
    """Classify the request's tools; the plan's `refusal` is set when it must not go out."""
    plan = ToolPlan()
    uses_bound, unlimited = 0, False
    tools = body.get("tools")
    tools = tools if isinstance(tools, list) else []
    if route == "openai.chat" and body.get("web_search_options") is not None:
        return _unpriced(plan, "openai.web_search_options", "web_search_options")
    for index, tool in enumerate(tools):
        if not isinstance(tool, dict):
            continue
        kind = tool.get("type")
        if route == "anthropic.messages" and kind is None:
            continue  # a custom tool
        if not isinstance(kind, str):
            continue  # not a tool type any vendor runs: the vendor refuses the request, unbilled
        if route == "anthropic.messages":
            base = _base_type(kind)
            if base in _ANTHROPIC_CLIENT:
                continue
            plan.server_side = True
            if base in _ANTHROPIC_FREE:
                unlimited = True
                continue
            key, limit_field, limit = f"anthropic.{base}", "max_uses", _limit(tool.get("max_uses"))
            where = f"tools.{index}"
        elif route in ("openai.responses", "openai.chat"):
            base = _base_type(kind)
            if base in _OPENAI_CLIENT:
                continue
            plan.server_side = True
            if route == "openai.responses" and base in _OPENAI_FREE:
                continue
            if base == "web_search_preview":
                base = "web_search"
            key, limit_field = f"openai.{base}", "max_tool_calls"
            limit, where = _limit(body.get("max_tool_calls")), f"tools.{index}"
        else:
            continue
        fee = table.tool_fee(key)
        if fee is None or route == "openai.chat":  # chat has no hosted tools to bound
            return _unpriced(plan, key, f"{where}.type")
        plan.offered.append(key)
        if key in PER_CALL:
            plan.worst_fee += fee
            unlimited = True
            continue
        if limit is None:
            field_path = f"{where}.max_uses" if limit_field == "max_uses" else "max_tool_calls"
            plan.refusal = (
                f"The harness proxy cannot bound the fees of server tool {kind!r}: its uses are "
                f'unlimited. Set {field_path} (e.g. "{limit_field}": 5) so the worst case can be '
                "reserved against the cap."
            )
            plan.param = field_path
            return plan
        plan.worst_fee += fee * limit
        uses_bound += limit
    return _bound_iterations(plan, route, body, uses_bound, unlimited)


def _bound_iterations(
    plan: ToolPlan, route: str, body: dict[str, Any], uses_bound: int, unlimited: bool
) -> ToolPlan:
    if not plan.server_side:
        return plan
    if route == "anthropic.messages":
        loops = ANTHROPIC_LOOP_LIMIT if unlimited else min(uses_bound, ANTHROPIC_LOOP_LIMIT)
        plan.iterations = 1 + loops
        return plan
    # OpenAI: max_tool_calls bounds every built-in tool call (MCP and containers included).
    limit = _limit(body.get("max_tool_calls"))
    if limit is None:
        plan.refusal = (
            "The harness proxy cannot bound a response whose hosted tools may run without "
            'limit. Set max_tool_calls (e.g. "max_tool_calls": 5) so the worst case can be '
            "reserved against the cap."
        )
        plan.param = "max_tool_calls"
        return plan
    plan.iterations = 1 + limit
    return plan


def _count(uses: dict[str, int], key: str, n: int = 1) -> None:
    uses[key] = uses.get(key, 0) + n


def anthropic_uses(usage: dict[str, Any], blocks: dict[str, int]) -> dict[str, int]:
    """Fee keys -> uses from Anthropic's `usage.server_tool_use` and the counted blocks."""
    uses: dict[str, int] = {}
    reported = usage.get("server_tool_use")
    if isinstance(reported, dict):
        for name, value in reported.items():
            if isinstance(name, str) and name.endswith("_requests"):
                n = value if isinstance(value, int) and not isinstance(value, bool) else 0
                if n > 0:
                    uses[f"anthropic.{name.removesuffix('_requests')}"] = n
    for key, n in blocks.items():
        uses[key] = max(uses.get(key, 0), n)
    return uses


def anthropic_block(block: Any, blocks: dict[str, int]) -> None:
    """Count one content block if it is a server tool use."""
    if isinstance(block, dict) and block.get("type") == "server_tool_use":
        name = block.get("name")
        name = name if isinstance(name, str) else "unnamed"
        _count(blocks, _ANTHROPIC_BLOCK_NAMES.get(name, f"anthropic.{name}"))


def openai_items(output: Any) -> dict[str, int]:
    """Fee keys -> uses from a Responses `output` list."""
    uses: dict[str, int] = {}
    for item in output if isinstance(output, list) else []:
        kind = item.get("type") if isinstance(item, dict) else None
        if not isinstance(kind, str) or kind in _OPENAI_CLIENT_ITEMS:
            continue
        if kind in _OPENAI_ITEMS:
            _count(uses, _OPENAI_ITEMS[kind])
        elif kind.endswith("_call"):
            _count(uses, f"openai.{kind.removesuffix('_call')}")  # unknown: unpriced, flagged
    return uses


def reply_tool_uses(route: str, reply: dict[str, Any], usage: dict[str, Any]) -> dict[str, int]:
    """Fee keys -> uses a plain reply reports."""
    if route == "anthropic.messages":
        blocks: dict[str, int] = {}
        content = reply.get("content")
        for block in content if isinstance(content, list) else []:
            anthropic_block(block, blocks)
        return anthropic_uses(usage, blocks)
    if route == "openai.responses":
        return openai_items(reply.get("output"))
    return {}
