"""An arm that disconnects mid-stream does not stop the vendor: it generates and bills the whole
reply. The rule: such a call is booked at its full reservation (flagged `billed_at_reservation`),
never at what the proxy happened to have read when the arm left.

The vendor here is FAST: it writes a 2,000-token reply at once, so when the SDK closes after its
first event, much of the reply is already in flight (the pilot booked 802 of 2,000 tokens).
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from ledger.prices import TokenCounts, cost, load_prices
from stubs.rules.context import StubContext
from stubs.rules.replies import ReplyBook
from tests.fakevendor.server import FakeVendor
from tests.proxy.live_helpers import start_live_proxy
from tests.proxy.proxy_process import ProxyProcess

pytestmark = pytest.mark.integration

HAIKU = "claude-haiku-4-5"
MINI = "gpt-4.1-mini"
# Far more than the socket buffers between the fake, the proxy and the SDK hold, so the arm leaves
# while the proxy is still relaying: max_tokens cuts the reply at MAX_TOKENS.
LONG_REPLY = " ".join(f"lighthouse{i % 97}" for i in range(12000))
MAX_TOKENS = 30000
USER: list[Any] = [{"role": "user", "content": "Tell me everything about lighthouses."}]


@pytest.fixture(scope="module")
def vendor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FakeVendor]:
    stubs = tmp_path_factory.mktemp("stubs") / "stubs.toml"
    stubs.write_text(f'schema = 1\n[replies]\nmain = ["{LONG_REPLY}"]\n')
    with FakeVendor(stub_context=StubContext(book=ReplyBook.load(stubs))) as fv:
        yield fv


@pytest.fixture(scope="module")
def live(vendor: FakeVendor, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProxyProcess]:
    tmp = tmp_path_factory.mktemp("disconnect")
    # No output cap (the default caps main calls at 6,000 tokens): the reply must be long.
    pins = tmp / "pins.toml"
    pins.write_text("[pins]\noutput_cap = 0\n")
    proxy = start_live_proxy(tmp, vendor, "--pins", str(pins), cap="5")
    yield proxy
    proxy.stop()


def _vendor_bill(model: str, vendor: FakeVendor) -> tuple[Decimal, int]:
    """What the vendor bills for the whole reply it generated, and its output tokens."""
    (served,) = vendor.wait_idle(timeout=10)
    assert served.full_output_tokens >= 20000, "the reply must be long for this test to mean much"
    tokens = TokenCounts(input=served.input_tokens, output=served.full_output_tokens)
    return cost(load_prices().model(model), tokens), served.full_output_tokens


def test_anthropic_arm_leaving_mid_stream_is_billed_at_least_what_the_vendor_bills(
    live: ProxyProcess, vendor: FakeVendor, tmp_path: Path
) -> None:
    vendor.reset()
    with live.anthropic().messages.stream(
        model=HAIKU, max_tokens=MAX_TOKENS, messages=USER
    ) as stream:
        for _ in stream.text_stream:
            break  # the arm gives up after the first words and closes the connection
    bill, _ = _vendor_bill(HAIKU, vendor)
    call = live.call_where(timeout=15, model_requested=HAIKU, outcome="client_disconnect")
    assert Decimal(call["cost_usd"]) >= bill
    assert "billed_at_reservation" in call["flags"]
    assert Decimal(call["cost_usd"]) == Decimal(call["reserved_usd"])


def test_openai_arm_leaving_mid_stream_is_billed_at_least_what_the_vendor_bills(
    live: ProxyProcess, vendor: FakeVendor
) -> None:
    vendor.reset()
    stream = live.openai().chat.completions.create(
        model=MINI, max_tokens=MAX_TOKENS, messages=USER, stream=True
    )
    for _ in stream:
        break
    stream.close()
    bill, _ = _vendor_bill(MINI, vendor)
    call = live.call_where(timeout=15, model_requested=MINI, outcome="client_disconnect")
    assert Decimal(call["cost_usd"]) >= bill
    assert "billed_at_reservation" in call["flags"]
