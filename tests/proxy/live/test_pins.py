"""Pinned sampling in live mode: what reaches the vendor, and what the call log says was changed.

A study pins sampling so every arm's main calls are made alike; other purposes are the arm's own
business. The pins must be applied model-aware (a vendor refuses temperature with Anthropic
thinking on, and temperature/top_p on OpenAI reasoning models), and a pin set that cannot be
applied to a request is refused by the proxy in the vendor's own error shape, before any spend.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import anthropic
import pytest
from anthropic.types import MessageParam
from openai.types.chat import ChatCompletionMessageParam

from tests.fakevendor.records import ReceivedRequest
from tests.fakevendor.server import FakeVendor
from tests.proxy.live_helpers import start_live_proxy
from tests.proxy.proxy_process import ProxyProcess

pytestmark = pytest.mark.integration

HAIKU = "claude-haiku-4-5-20251001"
PROMPT = "Say something about lighthouses."
USER: list[MessageParam] = [{"role": "user", "content": PROMPT}]
CHAT: list[ChatCompletionMessageParam] = [{"role": "user", "content": PROMPT}]
PINS = """
[pins]
temperature = 0.0
max_tokens = 4096
seed = 7
reasoning_effort = "low"
purposes = ["main"]
"""


@pytest.fixture(scope="module")
def live(vendor: FakeVendor, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProxyProcess]:
    tmp = tmp_path_factory.mktemp("pins")
    pins = tmp / "pins.toml"
    pins.write_text(PINS)
    proxy = start_live_proxy(tmp, vendor, "--pins", str(pins))
    yield proxy
    proxy.stop()


def _one_call(proxy: ProxyProcess, vendor: FakeVendor) -> tuple[ReceivedRequest, dict[str, Any]]:
    """The request the fake received for the last call, and the call's log record."""
    (received,) = vendor.requests
    return received, _last_record(proxy)


def _last_record(proxy: ProxyProcess) -> dict[str, Any]:
    """A plain call's record is written before its reply is relayed: the last line is it."""
    return proxy.calls(at_least=1)[-1]


def _rewrites(record: dict[str, Any]) -> dict[str, tuple[object, object]]:
    return {r["field"]: (r["before"], r["after"]) for r in record["rewrites"]}


def test_main_call_reaches_the_vendor_pinned_and_each_rewrite_is_logged(
    live: ProxyProcess, vendor: FakeVendor
) -> None:
    vendor.reset()
    live.anthropic().messages.create(
        model=HAIKU,
        max_tokens=100,
        messages=USER,
        extra_body={"temperature": 0.9},
        extra_headers={"X-Harness-Purpose": "main"},
    )
    received, record = _one_call(live, vendor)
    assert received.body["temperature"] == 0.0
    assert received.body["max_tokens"] == 4096
    assert "x-harness-purpose" not in received.headers  # the harness's header stays inside
    assert record["purpose"] == "main"
    assert _rewrites(record) == {"temperature": (0.9, 0.0), "max_tokens": (100, 4096)}


def test_openai_main_call_gets_every_pin_it_accepts(live: ProxyProcess, vendor: FakeVendor) -> None:
    vendor.reset()
    live.openai().chat.completions.create(
        model="gpt-4.1-mini",
        messages=CHAT,
        temperature=1.3,
        max_tokens=50,
    )
    received, record = _one_call(live, vendor)
    body = received.body
    assert body["temperature"] == 0.0 and body["seed"] == 7
    assert body["max_completion_tokens"] == 4096 and "max_tokens" not in body
    assert "reasoning_effort" not in body  # not a reasoning model: that pin does not apply
    assert _rewrites(record) == {
        "temperature": (1.3, 0.0),
        "seed": (None, 7),
        "max_completion_tokens": (None, 4096),
        "max_tokens": (50, None),
    }


def test_a_utility_call_is_never_rewritten(live: ProxyProcess, vendor: FakeVendor) -> None:
    vendor.reset()
    live.anthropic().messages.create(
        model=HAIKU,
        max_tokens=100,
        messages=USER,
        extra_body={"temperature": 0.9},
        extra_headers={"X-Harness-Purpose": "utility"},
    )
    received, record = _one_call(live, vendor)
    assert received.body["temperature"] == 0.9 and received.body["max_tokens"] == 100
    assert record["purpose"] == "utility" and record["rewrites"] == []


def test_anthropic_thinking_call_gets_no_temperature(
    live: ProxyProcess, vendor: FakeVendor
) -> None:
    vendor.reset()
    reply = live.anthropic().messages.create(
        model=HAIKU,
        max_tokens=3000,
        messages=USER,
        thinking={"type": "enabled", "budget_tokens": 1024},
        extra_body={"temperature": 0.5},
    )
    assert reply.content  # the vendor accepted it
    received, record = _one_call(live, vendor)
    assert "temperature" not in received.body
    assert received.body["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    assert received.body["max_tokens"] == 4096
    assert _rewrites(record) == {"max_tokens": (3000, 4096), "temperature": (0.5, None)}


def test_openai_reasoning_model_gets_no_temperature_or_top_p(
    live: ProxyProcess, vendor: FakeVendor
) -> None:
    vendor.reset()
    live.openai().chat.completions.create(
        model="gpt-5",
        messages=CHAT,
        temperature=0.7,
        top_p=0.9,
        max_tokens=300,
    )
    received, record = _one_call(live, vendor)
    body = received.body
    assert "temperature" not in body and "top_p" not in body and "seed" not in body
    assert body["reasoning_effort"] == "low"
    assert body["max_completion_tokens"] == 4096 and "max_tokens" not in body
    rewrites = _rewrites(record)
    assert rewrites["temperature"] == (0.7, None) and rewrites["top_p"] == (0.9, None)
    assert rewrites["reasoning_effort"] == (None, "low")


def test_a_pins_conflict_is_refused_in_the_vendors_shape_before_any_spend(
    live: ProxyProcess, vendor: FakeVendor
) -> None:
    vendor.reset()
    with pytest.raises(anthropic.BadRequestError) as err:
        live.anthropic().messages.create(
            model=HAIKU,
            max_tokens=9000,
            messages=USER,
            thinking={"type": "enabled", "budget_tokens": 8000},
        )
    assert err.value.status_code == 400
    assert isinstance(err.value.body, dict)
    assert err.value.body["error"]["type"] == "invalid_request_error"
    assert "budget_tokens" in err.value.message and "max_tokens" in err.value.message
    assert vendor.requests == []  # nothing went out
    record = _last_record(live)
    assert record["status"] == 400 and record["outcome"] == "refused"
    assert Decimal(record["cost_usd"]) == 0
