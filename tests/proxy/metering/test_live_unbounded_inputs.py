"""Inputs the request's bytes do not bound, in live mode: a PDF by URL is reserved at the model's
full input window, so the cap holds when the vendor bills 200,000 input tokens for 300 bytes.

The pilot this guards against: capped at $0.05... booked $1.00, five calls each reserved at about
$0.001 and billed 200,000 input tokens by the vendor.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from ledger.prices import TokenCounts, cost, load_prices, worst_case
from tests.fakevendor.server import FakeVendor
from tests.proxy.live_helpers import start_live_proxy
from tests.proxy.proxy_process import ProxyProcess

pytestmark = pytest.mark.integration

HAIKU = "claude-haiku-4-5"
MINI = "gpt-4.1-mini"
BILLED_INPUT = 200_000  # what the fake vendor bills for the document it "fetched"
CAP = Decimal("1.00")
PDF_BY_URL: Any = {
    "type": "document",
    "source": {"type": "url", "url": "https://x.test/report.pdf"},
}
FETCHED = {"x-fake-behaviour": f"input_tokens={BILLED_INPUT}"}


def _proxy(tmp_path: Path, vendor: FakeVendor, cap: Decimal = CAP) -> ProxyProcess:
    return start_live_proxy(tmp_path, vendor, cap=str(cap))


def test_pdf_by_url_is_reserved_at_the_full_window_and_the_cap_holds(
    tmp_path: Path, vendor: FakeVendor
) -> None:
    vendor.reset()
    proxy = _proxy(tmp_path, vendor)
    results: list[object] = []
    try:
        client = proxy.anthropic()
        for i in range(5):
            try:
                results.append(
                    client.messages.create(
                        model=HAIKU,
                        max_tokens=100,
                        messages=[
                            {
                                "role": "user",
                                "content": [PDF_BY_URL, {"type": "text", "text": f"Summary {i}"}],
                            }
                        ],
                        extra_headers=FETCHED,
                    )
                )
            except anthropic.PaymentRequiredError as e:
                results.append(e)
    finally:
        assert proxy.stop() == 0
    calls = proxy.calls()
    price = load_prices().model(HAIKU)
    window = worst_case(price, price.context_window, 100)
    admitted = [c for c in calls if c["outcome"] == "ok"]
    refused = [c for c in calls if c["outcome"] == "refused"]
    booked = sum((Decimal(c["cost_usd"]) for c in calls), Decimal(0))
    assert booked <= CAP, f"booked {booked} past the cap {CAP}"
    # $0.40 held per call against $0.20 billed: three fit, then the cap refuses the rest.
    assert len(admitted) == 3 and len(refused) == 2, [c["outcome"] for c in calls]
    assert all(isinstance(r, anthropic.PaymentRequiredError) for r in results[3:])
    assert len(vendor.requests) == 3  # refused calls never reached the vendor
    for call in admitted:
        assert "unbounded_input" in call["flags"]
        assert Decimal(call["reserved_usd"]) == window
        assert call["tokens"]["input"] == BILLED_INPUT
        billed = cost(price, TokenCounts(input=BILLED_INPUT, output=call["tokens"]["output"]))
        assert Decimal(call["cost_usd"]) == billed <= Decimal(call["reserved_usd"])


CHAT_SHAPES: dict[str, list[dict[str, Any]]] = {
    "image by URL": [{"type": "image_url", "image_url": {"url": "https://x.test/cat.png"}}],
    "file by id": [{"type": "file", "file": {"file_id": "file-abc123"}}],
}


@pytest.mark.parametrize("shape", sorted(CHAT_SHAPES))
def test_openai_input_by_reference_is_reserved_at_the_full_window(
    tmp_path: Path, vendor: FakeVendor, shape: str
) -> None:
    vendor.reset()
    proxy = _proxy(tmp_path, vendor, cap=Decimal(5))
    try:
        content: Any = [{"type": "text", "text": "What is this?"}, *CHAT_SHAPES[shape]]
        proxy.openai().chat.completions.create(
            model=MINI,
            max_tokens=50,
            messages=[{"role": "user", "content": content}],
            extra_headers=FETCHED,
        )
    finally:
        assert proxy.stop() == 0
    (call,) = proxy.calls()
    price = load_prices().model(MINI)
    assert call["outcome"] == "ok", call
    assert "unbounded_input" in call["flags"]
    assert Decimal(call["reserved_usd"]) == worst_case(price, price.context_window, 50)
    assert Decimal(call["cost_usd"]) <= Decimal(call["reserved_usd"])


def test_a_call_that_cannot_fit_its_window_is_refused_before_the_vendor(
    tmp_path: Path, vendor: FakeVendor
) -> None:
    """gpt-4.1-mini's 1M-token window is $0.42 at worst: a $0.05 cap refuses the call with
    OpenAI's own "out of credit" error, however small the request is."""
    vendor.reset()
    proxy = _proxy(tmp_path, vendor, cap=Decimal("0.05"))
    try:
        with pytest.raises(openai.RateLimitError) as caught:
            proxy.openai().responses.create(
                model=MINI,
                input=[
                    {
                        "role": "user",
                        "content": [
                            {"type": "input_text", "text": "Read this."},
                            {"type": "input_file", "file_url": "https://x.test/a.pdf"},
                        ],
                    }
                ],
            )
    finally:
        assert proxy.stop() == 0
    assert caught.value.code == "insufficient_quota"
    assert vendor.requests == []
    (call,) = proxy.calls()
    assert call["outcome"] == "refused" and "unbounded_input" in call["flags"]
