"""Live mode when the vendor or the arm misbehaves: what the SDK sees, what is logged and booked."""

from __future__ import annotations

import time
from collections.abc import Iterator
from decimal import Decimal

import anthropic
import httpx
import httpx2
import openai
import pytest

from proxy.metering.tokencount import count_tokens
from tests.fakevendor.server import FakeVendor
from tests.proxy.live_helpers import start_live_proxy
from tests.proxy.proxy_process import ProxyProcess

pytestmark = pytest.mark.integration

HAIKU = "claude-haiku-4-5-20251001"
USER = [{"role": "user", "content": "Write a long story about a lighthouse keeper and the sea."}]
DEADLINE = 3.0
BROKEN = (anthropic.APIConnectionError, openai.APIConnectionError, httpx2.TransportError)


@pytest.fixture(scope="module")
def vendor() -> Iterator[FakeVendor]:
    # The fake counts what it sends with a real tokenizer, as a vendor does; the proxy's own
    # count of a stream without usage must not fall below it.
    with FakeVendor(count_tokens=lambda text: count_tokens("gpt-4.1-mini", text)) as fv:
        yield fv


@pytest.fixture(scope="module")
def live(vendor: FakeVendor, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProxyProcess]:
    proxy = start_live_proxy(tmp_path_factory.mktemp("faults"), vendor, deadline=DEADLINE)
    # One normal call first: cold imports in the fake and the proxy must not eat the deadline.
    proxy.anthropic().messages.create(model=HAIKU, max_tokens=20, messages=USER)
    proxy.openai().chat.completions.create(model="gpt-4.1-mini", messages=USER)  # type: ignore[arg-type]
    yield proxy
    proxy.stop()


def _call_for(proxy: ProxyProcess, count_before: int) -> dict:  # type: ignore[type-arg]
    return proxy.calls(at_least=count_before + 1, timeout=15)[count_before]


def test_error_event_after_200_is_relayed_and_billed_for_what_was_sent(
    live: ProxyProcess, vendor: FakeVendor
) -> None:
    vendor.reset()
    before = len(live.calls())
    with pytest.raises(anthropic.APIStatusError):  # noqa: SIM117
        with live.anthropic().messages.stream(
            model=HAIKU,
            max_tokens=400,
            messages=USER,
            extra_headers={"x-fake-behaviour": "error_after=4"},
        ) as stream:
            for _ in stream:
                pass
    call = _call_for(live, before)
    assert call["outcome"] == "error_event" and "error_event" in call["flags"]
    assert call["tokens"]["input"] > 0
    assert Decimal(call["cost_usd"]) > 0


@pytest.mark.parametrize("route", ["anthropic", "openai"])
def test_stream_cut_before_terminal_event_breaks_the_arms_stream(
    live: ProxyProcess, vendor: FakeVendor, route: str
) -> None:
    vendor.reset()
    before = len(live.calls())
    with pytest.raises(BROKEN):
        if route == "anthropic":
            with live.anthropic().messages.stream(
                model=HAIKU,
                max_tokens=400,
                messages=USER,
                extra_headers={"x-fake-behaviour": "cut_after=5"},
            ) as stream:
                for _ in stream:
                    pass
        else:
            for _ in live.openai().chat.completions.create(
                model="gpt-4.1-mini",
                messages=USER,
                stream=True,  # type: ignore[arg-type]
                extra_headers={"x-fake-behaviour": "cut_after=5"},
            ):
                pass
    call = _call_for(live, before)
    assert call["outcome"] == "upstream_cut"
    assert any(flag.startswith("cut:") for flag in call["flags"])
    served = vendor.served[-1]
    assert call["tokens"]["output"] >= served.output_tokens > 0
    assert Decimal(call["cost_usd"]) > 0


def test_stream_without_usage_is_counted_by_the_proxy(
    live: ProxyProcess, vendor: FakeVendor
) -> None:
    vendor.reset()
    before = len(live.calls())
    chunks = list(
        live.openai().chat.completions.create(
            model="gpt-4.1-mini",
            messages=USER,
            stream=True,  # type: ignore[arg-type]
            extra_headers={"x-fake-behaviour": "no_usage"},
        )
    )
    assert chunks
    call = _call_for(live, before)
    assert call["tokens"]["source"] in ("proxy_count", "partial")
    assert call["tokens"]["output"] >= vendor.served[-1].output_tokens > 0
    assert Decimal(call["cost_usd"]) > 0


def test_usage_on_a_chunk_with_choices_is_read(live: ProxyProcess, vendor: FakeVendor) -> None:
    vendor.reset()
    before = len(live.calls())
    text = "".join(
        c.choices[0].delta.content or ""
        for c in live.openai().chat.completions.create(
            model="gpt-4.1-mini",
            messages=USER,
            stream=True,  # type: ignore[arg-type]
            extra_headers={"x-fake-behaviour": "usage_in_choice_chunk"},
        )
        if c.choices
    )
    assert text
    call = _call_for(live, before)
    assert call["tokens"]["source"] == "vendor"
    assert call["tokens"]["output"] == vendor.served[-1].output_tokens


@pytest.mark.parametrize("behaviour", ["first_byte_delay=10", "trickle=0.2"])
def test_upstream_deadline_closes_the_upstream_and_breaks_the_arm(
    live: ProxyProcess, vendor: FakeVendor, behaviour: str
) -> None:
    vendor.reset()
    before = len(live.calls())
    start = time.monotonic()
    with pytest.raises(BROKEN):
        live.openai(timeout=30).chat.completions.create(
            model="gpt-4.1-mini",
            messages=USER,
            stream=True,  # type: ignore[arg-type]
            extra_headers={"x-fake-behaviour": behaviour},
        ).__iter__().__next__()
        # A trickle may deliver headers: keep reading until the proxy cuts it.
        raise AssertionError("the stream should have broken")
    # Not before the deadline; how long after it a loaded machine takes is not asserted: the
    # proxy's own record says it cut the call at the deadline, and the vendor saw it leave.
    assert time.monotonic() - start >= DEADLINE - 0.2
    disconnect = vendor.wait_for_disconnect(timeout=60)
    assert disconnect.monotonic >= start
    call = _call_for(live, before)
    assert call["outcome"] == "upstream_deadline"
    assert "cut:deadline" in call["flags"]
    assert Decimal(call["cost_usd"]) > 0


def test_client_disconnect_mid_stream_closes_upstream_and_is_billed(
    live: ProxyProcess, vendor: FakeVendor
) -> None:
    vendor.reset()
    before = len(live.calls())
    with httpx.stream(
        "POST",
        f"{live.openai_base}/chat/completions",
        json={"model": "gpt-4.1-mini", "messages": USER, "stream": True},
        headers={"x-fake-behaviour": "chunk_delay=0.2", "authorization": "Bearer placeholder"},
        timeout=30,
    ) as response:
        assert response.status_code == 200
        for _ in response.iter_raw():
            break  # the arm gives up after the first bytes
    vendor.wait_for_disconnect(timeout=10)
    call = _call_for(live, before)
    assert call["outcome"] == "client_disconnect"
    assert call["tokens"]["input"] > 0
    assert Decimal(call["cost_usd"]) > 0
