"""Server-tool plans before a call and tool uses read from replies, on the packaged price table."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest

from ledger.prices import load_prices
from proxy.metering.billing import booked_tool_uses, reserved_input
from proxy.metering.server_tools import ANTHROPIC_LOOP_LIMIT, plan_tools, reply_tool_uses
from proxy.metering.usage import MeteredUsage, StreamMeter, usage_from_body

TABLE = load_prices()


def _anthropic(*tools: Any) -> dict[str, Any]:
    return {"model": "claude-haiku-4-5", "max_tokens": 10, "messages": [], "tools": list(tools)}


def test_client_tools_bill_only_tokens() -> None:
    plan = plan_tools(
        "anthropic.messages",
        _anthropic(
            {"name": "lookup", "input_schema": {"type": "object"}},
            {"type": "custom", "name": "x", "input_schema": {}},
            {"type": "bash_20250124", "name": "bash"},
            {"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"},
            {"type": "memory_20250818", "name": "memory"},
        ),
        TABLE,
    )
    assert plan.refusal is None and plan.offered == [] and plan.worst_fee == 0


def test_worst_fee_is_max_uses_times_the_fee_plus_per_call_containers() -> None:
    plan = plan_tools(
        "anthropic.messages",
        _anthropic(
            {"type": "web_search_20250305", "name": "web_search", "max_uses": 7},
            {"type": "code_execution_20250825", "name": "code_execution"},
        ),
        TABLE,
    )
    assert plan.refusal is None
    assert plan.worst_fee == Decimal("0.07") + Decimal("0.05")
    body = {"model": "m", "input": "x", "max_tool_calls": 4, "tools": [{"type": "web_search"}]}
    assert plan_tools("openai.responses", body, TABLE).worst_fee == 4 * Decimal("0.025")


@pytest.mark.parametrize("max_uses", [None, -1, 2.5, True, "5", [], {"n": 1}])
def test_unbounded_uses_are_refused_with_what_to_set(max_uses: Any) -> None:
    tool: dict[str, Any] = {"type": "web_search_20250305", "name": "web_search"}
    if max_uses is not None:
        tool["max_uses"] = max_uses
    plan = plan_tools("anthropic.messages", _anthropic(tool), TABLE)
    assert plan.refusal is not None and "max_uses" in plan.refusal
    assert plan.param == "tools.0.max_uses"


@pytest.mark.parametrize(
    ("route", "body"),
    [
        ("openai.responses", {"tools": [{"type": "image_generation"}], "max_tool_calls": 1}),
        ("openai.responses", {"tools": [{"type": "computer_use_preview"}], "max_tool_calls": 1}),
        ("openai.chat", {"tools": [{"type": "web_search"}]}),
        ("openai.chat", {"web_search_options": {}}),
        ("anthropic.messages", {"tools": [{"type": "some_new_server_tool_20270101"}]}),
    ],
)
def test_a_tool_the_table_cannot_price_is_refused(route: str, body: dict[str, Any]) -> None:
    plan = plan_tools(route, body, TABLE)
    assert plan.refusal is not None and "cannot price" in plan.refusal


def test_a_table_without_fees_refuses_every_server_tool() -> None:
    bare = TABLE.model_copy(update={"tool_fees": {}})
    tool = {"type": "web_search_20250305", "name": "web_search", "max_uses": 1}
    assert plan_tools("anthropic.messages", _anthropic(tool), bare).refusal


def test_hostile_tool_lists_do_not_crash() -> None:
    deep: Any = []
    for _ in range(50_000):
        deep = [deep]
    for tools in (None, "x", 5, [None, 3, "s", {"type": deep}, {"type": {"a": 1}}], {"a": 1}):
        assert plan_tools("anthropic.messages", {"tools": tools}, TABLE).refusal is None


def test_anthropic_uses_come_from_usage_and_blocks_the_larger_wins() -> None:
    reply = {
        "content": [
            {"type": "server_tool_use", "name": "web_search"},
            {"type": "server_tool_use", "name": "web_fetch"},
            {"type": "server_tool_use", "name": "web_fetch"},
        ],
        "usage": {"server_tool_use": {"web_search_requests": 3, "web_fetch_requests": 1}},
    }
    uses = reply_tool_uses("anthropic.messages", reply, reply["usage"])  # type: ignore[arg-type]
    assert uses == {"anthropic.web_search": 3, "anthropic.web_fetch": 2}


def test_openai_uses_are_the_hosted_call_items() -> None:
    reply = {
        "output": [
            {"type": "web_search_call"},
            {"type": "web_search_call"},
            {"type": "function_call"},
            {"type": "file_search_call"},
            {"type": "message"},
            {"type": "brand_new_call"},
        ]
    }
    uses = reply_tool_uses("openai.responses", reply, {})
    assert uses == {"openai.web_search": 2, "openai.file_search": 1, "openai.brand_new": 1}


def test_stream_meter_reads_tool_uses_and_model() -> None:
    events = [
        ("message_start", {"type": "message_start", "message": {"model": "claude-x", "usage": {}}}),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "content_block": {"type": "server_tool_use", "name": "web_search"},
            },
        ),
        (
            "message_delta",
            {
                "type": "message_delta",
                "usage": {"output_tokens": 5, "server_tool_use": {"web_search_requests": 4}},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    meter = StreamMeter("anthropic.messages", "claude-x")
    for name, data in events:
        meter.feed(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
    meter.finish()
    usage = meter.usage()
    assert usage.model == "claude-x" and usage.tool_uses == {"anthropic.web_search": 4}


def test_booking_uses_the_final_usage_or_the_reservation() -> None:
    body = {"model": "m", "input": "x", "max_tool_calls": 4, "tools": [{"type": "web_search"}]}
    plan = plan_tools("openai.responses", body, TABLE)
    final = MeteredUsage(input=1, output=1, tool_uses={"openai.web_search": 2})
    assert booked_tool_uses(plan, final, 200, TABLE) == {"openai.web_search": 2}
    partial = MeteredUsage(input=None, output=1, source="proxy_count")
    assert booked_tool_uses(plan, partial, 200, TABLE) is None  # billed at the reservation
    assert booked_tool_uses(plan, None, 400, TABLE) == {}  # refused by the vendor: nothing ran
    unpriced = MeteredUsage(input=1, output=1, tool_uses={"openai.image_generation": 1})
    assert booked_tool_uses(plan, unpriced, 200, TABLE) is None


def test_a_deeply_nested_reply_is_not_a_crash() -> None:
    body = b'{"usage": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    assert usage_from_body("anthropic.messages", body) is None


def test_each_sampling_iteration_of_a_tool_loop_is_reserved() -> None:
    """The vendor samples again after every tool use and bills each iteration's whole prompt."""
    search = {"type": "web_search_20250305", "name": "web_search", "max_uses": 3}
    assert plan_tools("anthropic.messages", _anthropic(search), TABLE).iterations == 4
    container = {"type": "code_execution_20250825", "name": "code_execution"}
    looped = plan_tools("anthropic.messages", _anthropic(search, container), TABLE)
    assert looped.iterations == 1 + ANTHROPIC_LOOP_LIMIT
    body = {"model": "m", "input": "x", "max_tool_calls": 2, "tools": [{"type": "mcp"}]}
    assert plan_tools("openai.responses", body, TABLE).iterations == 3
    price = TABLE.model("claude-haiku-4-5")
    prompt, found = reserved_input("anthropic.messages", _anthropic(search), 300, price, looped)
    assert prompt == price.context_window * looped.iterations and found.unbounded


@pytest.mark.parametrize(
    "tool", [{"type": "mcp", "server_url": "https://x.test"}, {"type": "code_interpreter"}]
)
def test_openai_hosted_tools_without_max_tool_calls_are_refused(tool: dict[str, Any]) -> None:
    plan = plan_tools("openai.responses", {"model": "m", "input": "x", "tools": [tool]}, TABLE)
    assert plan.refusal is not None and "max_tool_calls" in plan.refusal
