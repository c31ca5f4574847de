"""Server-side tools in live mode: their per-use fees are reserved and booked from the price
table, a tool whose uses are unbounded or whose fee is unknown is refused before the vendor, and
the audit re-prices the fees as the proxy booked them.

The pilot this guards against: Anthropic reported `web_search_requests: 10` ($0.10 at $10 per
1,000) and the proxy booked $0.000065, the tokens alone.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from harness.checks.audit.money import expected_cost
from ledger.prices import TokenCounts, cost, load_prices
from rundir.calls.calllog import CallRecord
from tests.fakevendor.server import FakeVendor
from tests.proxy.live_helpers import start_live_proxy
from tests.proxy.proxy_process import ProxyProcess

pytestmark = pytest.mark.integration

HAIKU = "claude-haiku-4-5"
MINI = "gpt-4.1-mini"
USER: list[Any] = [{"role": "user", "content": "What is new in lighthouse design this year?"}]
SEARCH: Any = {"type": "web_search_20250305", "name": "web_search", "max_uses": 10}
TEN_SEARCHES = {"x-fake-behaviour": "web_searches=10"}


@pytest.fixture(scope="module")
def live(vendor: FakeVendor, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProxyProcess]:
    proxy = start_live_proxy(tmp_path_factory.mktemp("tools"), vendor, cap="5")
    yield proxy
    proxy.stop()


def _token_cost(model: str, call: dict[str, Any]) -> Decimal:
    t = call["tokens"]
    return cost(load_prices().model(model), TokenCounts(input=t["input"], output=t["output"]))


def _audit_agrees(call: dict[str, Any]) -> None:
    record = CallRecord.model_validate(call)
    assert expected_cost(record, load_prices()) == Decimal(call["cost_usd"])


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_anthropic_web_searches_are_booked_at_their_fee(
    live: ProxyProcess, vendor: FakeVendor, stream: bool
) -> None:
    vendor.reset()
    client = live.anthropic()
    kwargs: dict[str, Any] = {
        "model": HAIKU,
        "max_tokens": 200,
        "messages": USER,
        "tools": [SEARCH],
        "extra_headers": TEN_SEARCHES,
    }
    if stream:
        with client.messages.stream(**kwargs) as s:
            s.get_final_message()
    else:
        client.messages.create(**kwargs)
    call = live.call_where(request_hash=_last_hash(live), outcome="ok")
    fees = Decimal("0.10")  # 10 searches at $10 per 1,000
    assert call["tokens"]["tool_uses"] == {"anthropic.web_search": 10}
    assert Decimal(call["cost_usd"]) == _token_cost(HAIKU, call) + fees
    assert Decimal(call["cost_usd"]) <= Decimal(call["reserved_usd"])
    assert "server_tools" in call["flags"] and "unbounded_input" in call["flags"]
    _audit_agrees(call)


def test_openai_hosted_web_search_calls_are_booked_at_their_fee(
    live: ProxyProcess, vendor: FakeVendor
) -> None:
    vendor.reset()
    live.openai().responses.create(
        model=MINI,
        input="What changed in lighthouse lenses?",
        tools=[{"type": "web_search"}],
        max_tool_calls=3,
        max_output_tokens=100,
        extra_headers={"x-fake-behaviour": "web_searches=3"},
    )
    call = live.call_where(request_hash=_last_hash(live), outcome="ok")
    assert call["tokens"]["tool_uses"] == {"openai.web_search": 3}
    fee = load_prices().tool_fee("openai.web_search")
    assert fee is not None
    assert Decimal(call["cost_usd"]) == _token_cost(MINI, call) + 3 * fee
    _audit_agrees(call)


@pytest.mark.parametrize(
    ("route", "request_fields", "message"),
    [
        (
            "anthropic",
            {"tools": [{"type": "web_search_20250305", "name": "web_search"}]},
            "max_uses",
        ),
        ("openai", {"tools": [{"type": "web_search"}]}, "max_tool_calls"),
        ("openai", {"tools": [{"type": "image_generation"}], "max_tool_calls": 1}, "price"),
        (
            "anthropic",
            {"tools": [{"type": "tool_search_tool_regex_20251119", "name": "s"}]},
            "price",
        ),
    ],
    ids=["anthropic-unbounded", "openai-unbounded", "openai-unpriced", "anthropic-unpriced"],
)
def test_a_tool_that_cannot_be_bounded_or_priced_is_refused_before_the_vendor(
    live: ProxyProcess, vendor: FakeVendor, route: str, request_fields: dict[str, Any], message: str
) -> None:
    vendor.reset()
    if route == "anthropic":
        with pytest.raises(anthropic.BadRequestError) as a_err:
            live.anthropic().messages.create(
                model=HAIKU, max_tokens=100, messages=USER, **request_fields
            )
        text = a_err.value.message
    else:
        with pytest.raises(openai.BadRequestError) as o_err:
            live.openai().responses.create(model=MINI, input="Draw a lighthouse.", **request_fields)
        text = o_err.value.message
    assert message in text and "harness proxy" in text
    assert vendor.requests == []  # nothing went out, nothing was billed


def test_worst_case_fees_count_against_the_cap(tmp_path: Path, vendor: FakeVendor) -> None:
    """Ten searches may cost $0.10: a $0.05 cap refuses the call rather than letting it out."""
    vendor.reset()
    proxy = start_live_proxy(tmp_path, vendor, cap="0.05")
    try:
        with pytest.raises(anthropic.PaymentRequiredError):
            proxy.anthropic().messages.create(
                model=HAIKU,
                max_tokens=100,
                messages=USER,
                tools=[SEARCH],
                extra_headers=TEN_SEARCHES,
            )
    finally:
        assert proxy.stop() == 0
    assert vendor.requests == []
    (call,) = proxy.calls()
    assert call["outcome"] == "refused" and "over_cap" in call["flags"]


def _last_hash(proxy: ProxyProcess) -> str:
    return str(proxy.calls(at_least=1)[-1]["request_hash"])
