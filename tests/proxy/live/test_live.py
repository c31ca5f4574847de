"""Live mode end to end: official SDKs -> live proxy process -> fake vendor (HTTP and TLS)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import anthropic
import openai
import pytest

from ledger.prices import TokenCounts, cost, load_prices
from tests.fakevendor.server import FakeVendor
from tests.helpers.studies import harness
from tests.proxy.live_helpers import (
    STUDY_ANTHROPIC_KEY,
    STUDY_OPENAI_KEY,
    start_live_proxy,
)
from tests.proxy.proxy_process import ProxyProcess

pytestmark = pytest.mark.integration

HAIKU = "claude-haiku-4-5-20251001"
USER = [{"role": "user", "content": "Tell me about lighthouses, briefly."}]


@pytest.fixture(scope="module", params=[False, True], ids=["http", "tls"])
def vendor(request: pytest.FixtureRequest) -> Iterator[FakeVendor]:
    with FakeVendor(tls=request.param) as fv:
        yield fv


@pytest.fixture(scope="module")
def live(vendor: FakeVendor, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProxyProcess]:
    proxy = start_live_proxy(tmp_path_factory.mktemp("live"), vendor)
    yield proxy
    proxy.stop()


def _last_call(proxy: ProxyProcess) -> dict:  # type: ignore[type-arg]
    before = len(proxy.calls())
    return proxy.calls(at_least=before)[-1]


def test_plain_call_is_forwarded_with_the_study_key_and_priced_exactly(
    live: ProxyProcess, vendor: FakeVendor
) -> None:
    vendor.reset()
    reply = live.anthropic().messages.create(model=HAIKU, max_tokens=300, messages=USER)
    assert reply.content[0].type == "text"
    (received,) = vendor.requests
    assert received.api_key == STUDY_ANTHROPIC_KEY
    assert received.headers.get("accept-encoding") == "identity"
    call = live.calls(at_least=1)[-1]
    assert call["mode"] == "live" and call["outcome"] == "ok" and call["status"] == 200
    assert call["tokens"]["source"] == "vendor"
    assert call["tokens"]["input"] == reply.usage.input_tokens
    assert call["tokens"]["output"] == reply.usage.output_tokens
    expected = cost(
        load_prices().model(HAIKU),
        TokenCounts(input=reply.usage.input_tokens, output=reply.usage.output_tokens),
    )
    assert Decimal(call["cost_usd"]) == expected > 0


def test_streams_relay_and_meter(live: ProxyProcess, vendor: FakeVendor) -> None:
    vendor.reset()
    client = live.anthropic()
    with client.messages.stream(model=HAIKU, max_tokens=300, messages=USER) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text == final.content[0].text  # type: ignore[union-attr]
    call = live.calls(at_least=2)[-1]
    assert call["stream"] is True and call["tokens"]["source"] == "vendor"
    assert call["tokens"]["output"] == final.usage.output_tokens
    assert call["response_chunks"] and sum(call["response_chunks"]) > 0


def test_openai_usage_chunk_is_requested_and_hidden_from_an_arm_that_did_not_ask(
    live: ProxyProcess, vendor: FakeVendor
) -> None:
    vendor.reset()
    chunks = list(
        live.openai().chat.completions.create(
            model="gpt-4.1-mini",
            messages=USER,
            stream=True,  # type: ignore[arg-type]
        )
    )
    assert all(chunk.choices for chunk in chunks)  # no usage-only chunk reached the arm
    assert all(chunk.usage is None for chunk in chunks)
    (received,) = vendor.requests
    assert received.api_key == STUDY_OPENAI_KEY
    assert received.body["stream_options"] == {"include_usage": True}
    served = vendor.served_for(received.id)
    call = live.calls(at_least=3)[-1]
    assert call["tokens"]["output"] == served.output_tokens
    assert call["tokens"]["source"] == "vendor"
    assert {"field": "stream_options.include_usage", "before": None, "after": True} in call[
        "rewrites"
    ]


def test_arm_that_asks_for_usage_still_gets_it(live: ProxyProcess, vendor: FakeVendor) -> None:
    chunks = list(
        live.openai().chat.completions.create(
            model="gpt-4.1-mini",
            messages=USER,
            stream=True,  # type: ignore[arg-type]
            stream_options={"include_usage": True},
        )
    )
    assert chunks[-1].choices == [] and chunks[-1].usage is not None


def test_unknown_model_is_refused_before_the_vendor(live: ProxyProcess, vendor: FakeVendor) -> None:
    vendor.reset()
    with pytest.raises(openai.BadRequestError, match="not in the price table"):
        live.openai().chat.completions.create(model="gpt-unpriced-9", messages=USER)  # type: ignore[arg-type]
    assert vendor.requests == []
    call = live.calls(at_least=1)[-1]
    assert call["outcome"] == "refused" and call["cost_usd"] == "0"


def test_premium_tiers_the_table_cannot_price_are_refused_before_the_vendor(
    live: ProxyProcess, vendor: FakeVendor
) -> None:
    """Fast mode, regional inference, OpenAI's Fast tier: billed above the table's standard
    rates, so pricing them at those rates would under-count; the proxy refuses them."""
    vendor.reset()
    with pytest.raises(openai.BadRequestError, match='cannot price service_tier="priority"'):
        live.openai().chat.completions.create(
            model="gpt-4.1-mini",
            messages=USER,  # type: ignore[arg-type]
            service_tier="priority",
        )
    with pytest.raises(anthropic.BadRequestError, match='cannot price speed="fast"'):
        live.anthropic().messages.create(
            model=HAIKU, max_tokens=50, messages=USER, extra_body={"speed": "fast"}
        )
    assert vendor.requests == []
    refused = live.calls(at_least=2)[-2:]
    assert [c["outcome"] for c in refused] == ["refused", "refused"]
    assert all("unpriced_option" in c["flags"] and c["cost_usd"] == "0" for c in refused)
    # The cheaper tier is allowed: the standard rates over-count it, which is safe.
    live.openai().chat.completions.create(
        model="gpt-4.1-mini",
        messages=USER,  # type: ignore[arg-type]
        service_tier="flex",
    )
    assert len(vendor.requests) == 1


def test_vendor_errors_reach_the_sdk_typed_and_cost_nothing(
    live: ProxyProcess, vendor: FakeVendor
) -> None:
    client = live.anthropic()
    with pytest.raises(anthropic.OverloadedError):
        client.messages.create(
            model=HAIKU,
            max_tokens=50,
            messages=USER,
            extra_headers={"x-fake-behaviour": "status=529"},
        )
    with pytest.raises(openai.RateLimitError) as err:
        live.openai().chat.completions.create(
            model="gpt-4.1",
            messages=USER,  # type: ignore[arg-type]
            extra_headers={"x-fake-behaviour": "status=429;retry_after=2"},
        )
    assert err.value.response.headers.get("retry-after") == "2"
    call = live.calls(at_least=2)[-1]
    assert call["outcome"] == "vendor_error" and call["status"] == 429
    assert Decimal(call["cost_usd"]) == 0


def test_models_list_is_forwarded_free(live: ProxyProcess) -> None:
    assert live.openai().models.list().data
    call = live.calls(at_least=1)[-1]
    assert call["route"] == "openai.models" and call["cost_usd"] == "0"


def test_ledger_books_the_run_on_exit(vendor: FakeVendor, tmp_path: Path) -> None:
    proxy = start_live_proxy(tmp_path, vendor)
    client = proxy.openai()
    for _ in range(3):
        client.chat.completions.create(model="gpt-4.1-mini", messages=USER)  # type: ignore[arg-type]
    calls = proxy.calls(at_least=3)
    assert proxy.stop() == 0
    ledger = tmp_path / "ledger.jsonl"
    verify = harness("ledger", "verify", "--ledger", str(ledger))
    assert verify.returncode == 0, verify.stderr
    entries = [json.loads(line) for line in ledger.read_text().splitlines()]
    kinds = [e["kind"] for e in entries]
    assert kinds[0] == "stage_opened" and "run_reserved" in kinds and kinds[-1] == "run_settled"
    settled = [c for e in entries if e["kind"] == "calls_settled" for c in e["fields"]["calls"]]
    assert sum(Decimal(c["cost_usd"]) for c in settled) == sum(
        Decimal(c["cost_usd"]) for c in calls
    )
    assert Decimal(entries[-1]["fields"]["total_usd"]) == sum(Decimal(c["cost_usd"]) for c in calls)


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_a_call_billed_at_a_premium_tier_is_booked_at_the_worst_case_and_stops_the_run(
    vendor: FakeVendor, tmp_path: Path, stream: bool
) -> None:
    """The OpenAI project's default tier can be Fast while the request names none: the reply
    says so. That call is booked at 6x its standard cost and flagged; later calls are refused."""
    proxy = start_live_proxy(tmp_path, vendor)
    try:
        client = proxy.openai()
        normal = client.chat.completions.create(model="gpt-4.1-mini", messages=USER)  # type: ignore[arg-type]
        assert normal.service_tier == "default"
        premium = {"x-fake-behaviour": "service_tier=priority"}
        if stream:
            chunks = list(
                client.chat.completions.create(
                    model="gpt-4.1-mini",
                    messages=USER,  # type: ignore[arg-type]
                    stream=True,
                    extra_headers=premium,
                )
            )
            assert chunks[-1].service_tier == "priority"
        else:
            reply = client.chat.completions.create(
                model="gpt-4.1-mini",
                messages=USER,  # type: ignore[arg-type]
                extra_headers=premium,
            )
            assert reply.service_tier == "priority"
        with pytest.raises(openai.InternalServerError, match="service tier 'priority'"):
            client.chat.completions.create(model="gpt-4.1-mini", messages=USER)  # type: ignore[arg-type]
        first, billed, refused = proxy.calls(at_least=3)
    finally:
        proxy.stop()
    assert "premium_tier:priority" in billed["flags"]
    # The same request at the standard tier cost `first`; the premium one is booked at 6x.
    assert Decimal(billed["cost_usd"]) == 6 * Decimal(first["cost_usd"]) > 0
    assert refused["outcome"] == "refused" and refused["cost_usd"] == "0"
    assert len(vendor.requests) >= 2
