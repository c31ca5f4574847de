"""Anthropic's OpenAI-compatibility route (`/anthropic/v1/chat/completions`), reached by the
official openai SDK through the proxy: record mode answers from stubs/anthropic/compat.py, live
mode forwards to the (fake) vendor and meters the OpenAI-shaped usage at the Anthropic model's
prices."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import openai
import pytest

from tests.fakevendor.server import FakeVendor
from tests.proxy.live_helpers import start_live_proxy
from tests.proxy.proxy_process import ProxyProcess

pytestmark = pytest.mark.integration

SONNET = "claude-sonnet-4-6"
MESSAGES: list[Any] = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "Name a lighthouse."},
    {"role": "developer", "content": "Answer in one line."},
]


def _compat(proxy: ProxyProcess) -> openai.OpenAI:
    # Anthropic's page: the OpenAI SDK with base_url pointed at Anthropic's /v1.
    client = openai.OpenAI(
        base_url=proxy.anthropic_base + "/v1", api_key="placeholder", max_retries=0
    )
    return client


def test_record_answers_in_openai_shape_with_no_cache(record_proxy: ProxyProcess) -> None:
    client = _compat(record_proxy)
    plain = client.chat.completions.create(model=SONNET, messages=MESSAGES, max_tokens=300)
    assert plain.object == "chat.completion" and plain.model == SONNET
    assert plain.choices[0].message.content
    assert plain.usage is not None and plain.usage.prompt_tokens > 0
    assert plain.usage.prompt_tokens_details is not None
    assert plain.usage.prompt_tokens_details.cached_tokens == 0
    call = record_proxy.call_where(route="anthropic.chat", stream=False)
    assert call["vendor"] == "anthropic" and call["status"] == 200

    chunks = list(
        client.chat.completions.create(
            model=SONNET,
            messages=MESSAGES,
            max_tokens=300,
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    streamed = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert streamed == plain.choices[0].message.content


def test_record_honours_thinking_and_effort(record_proxy: ProxyProcess) -> None:
    client = _compat(record_proxy)
    base = client.chat.completions.create(model=SONNET, messages=MESSAGES, max_tokens=4000)
    thought = client.chat.completions.create(
        model=SONNET,
        messages=MESSAGES,
        max_tokens=4000,
        extra_body={"thinking": {"type": "enabled", "budget_tokens": 2000}},
    )
    assert base.usage is not None and thought.usage is not None
    assert thought.usage.completion_tokens > base.usage.completion_tokens
    # A bad value is refused: the route reads the field (what `harness probe` relies on).
    with pytest.raises(openai.BadRequestError, match="budget_tokens"):
        client.chat.completions.create(
            model=SONNET,
            messages=MESSAGES,
            extra_body={"thinking": {"type": "enabled", "budget_tokens": 5}},
        )
    with pytest.raises(openai.BadRequestError, match=r"output_config\.effort"):
        client.chat.completions.create(
            model=SONNET, messages=MESSAGES, extra_body={"output_config": {"effort": "huge"}}
        )
    with pytest.raises(openai.BadRequestError, match="n=1"):
        client.chat.completions.create(model=SONNET, messages=MESSAGES, n=2)


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProxyProcess]:
    with FakeVendor() as vendor:
        proxy = start_live_proxy(tmp_path_factory.mktemp("compat"), vendor)
        yield proxy
        proxy.stop()


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_live_meters_the_compat_route_as_the_anthropic_model(
    live: ProxyProcess, stream: bool
) -> None:
    client = _compat(live)
    if stream:
        chunks = list(
            client.chat.completions.create(
                model=SONNET,
                messages=MESSAGES,
                max_tokens=200,
                stream=True,
                stream_options={"include_usage": True},
            )
        )
        assert any(c.choices and c.choices[0].delta.content for c in chunks)
    else:
        reply = client.chat.completions.create(model=SONNET, messages=MESSAGES, max_tokens=200)
        assert reply.choices[0].message.content and reply.model == SONNET
    call = live.call_where(route="anthropic.chat", stream=stream, outcome="ok")
    assert call["vendor"] == "anthropic" and call["model_served"] == SONNET
    tokens = call["tokens"]
    assert tokens["source"] == "vendor" and "billed_at_reservation" not in call["flags"]
    assert tokens["input"] > 0 and tokens["output"] > 0 and tokens["cache_read"] == 0
    # Priced as the Anthropic model: Sonnet's $3 in / $15 out per million tokens.
    expected = (tokens["input"] * 3 + tokens["output"] * 15) / 1e6
    assert float(call["cost_usd"]) == pytest.approx(expected, rel=1e-6)
