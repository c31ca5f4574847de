"""Delay and hang modes: streamed stub replies really stream, and deadlines can be exercised."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import anthropic
import httpx
import httpx2
import openai
import pytest

from tests.proxy.proxy_process import ProxyProcess

pytestmark = pytest.mark.integration

STUBS = """
schema = 1
[[delays]]
purpose = "paced"
chunk_ms = 60
[[delays]]
purpose = "late"
first_byte_ms = 400
[[delays]]
purpose = "hang"
hang_before_headers = true
[[delays]]
purpose = "stall"
stall_after_chunks = 3
[[delays]]
purpose = "cut"
cut_after_chunks = 3
"""

MESSAGE = {
    "model": "claude-haiku-4-5-20251001",
    "max_tokens": 200,
    "messages": [{"role": "user", "content": "Tell me a long story about a lighthouse keeper"}],
}


@pytest.fixture(scope="module")
def delayed_proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProxyProcess]:
    root = tmp_path_factory.mktemp("delays")
    stubs = root / "stubs.toml"
    stubs.write_text(STUBS)
    proxy = ProxyProcess(root / "run", "--stubs", str(stubs))
    yield proxy
    proxy.stop()


def _stream_arrivals(proxy: ProxyProcess, purpose: str) -> list[float]:
    arrivals = []
    start = time.monotonic()
    with httpx.stream(
        "POST",
        f"{proxy.anthropic_base}/v1/messages",
        json={**MESSAGE, "stream": True},
        headers={"x-harness-purpose": purpose, "anthropic-version": "2023-06-01"},
        timeout=30,
    ) as response:
        assert response.status_code == 200
        for _ in response.iter_raw():
            arrivals.append(time.monotonic() - start)
    return arrivals


def test_streamed_reply_arrives_chunk_by_chunk(delayed_proxy: ProxyProcess) -> None:
    arrivals = _stream_arrivals(delayed_proxy, "paced")
    assert len(arrivals) >= 5
    # With 60 ms between events the first bytes come long before the last.
    assert arrivals[-1] - arrivals[0] >= 0.06 * (len(arrivals) - 2) * 0.8
    assert arrivals[0] < arrivals[-1] / 2


def test_sdk_stream_reads_a_paced_reply(delayed_proxy: ProxyProcess) -> None:
    client = delayed_proxy.anthropic()
    with client.messages.stream(**MESSAGE, extra_headers={"x-harness-purpose": "paced"}) as s:
        texts = list(s.text_stream)
        final = s.get_final_message()
    assert "".join(texts) == final.content[-1].text  # type: ignore[union-attr]


def test_first_byte_delay_applies_to_plain_replies(delayed_proxy: ProxyProcess) -> None:
    client = delayed_proxy.openai()
    start = time.monotonic()
    client.chat.completions.create(
        model="gpt-4.1",
        messages=[{"role": "user", "content": "hi"}],
        extra_headers={"x-harness-purpose": "late"},
    )
    assert time.monotonic() - start >= 0.4


def test_hang_before_headers_times_out_the_client_and_is_logged(
    delayed_proxy: ProxyProcess,
) -> None:
    client = delayed_proxy.openai(timeout=1.0)
    start = time.monotonic()
    with pytest.raises(openai.APITimeoutError):
        client.chat.completions.create(
            model="gpt-4.1",
            messages=[{"role": "user", "content": "hi"}],
            extra_headers={"x-harness-purpose": "hang"},
        )
    assert time.monotonic() - start >= 0.9  # the client's own timeout ended it (no upper bound)
    assert delayed_proxy.call_where(purpose="hang")["outcome"] == "client_disconnect"
    # The proxy still answers.
    assert client.models.list().data


def test_stall_mid_stream_leaves_the_client_waiting(delayed_proxy: ProxyProcess) -> None:
    client = delayed_proxy.anthropic(timeout=1.5)
    received: list[str] = []
    # Mid-stream, the SDK surfaces the transport's read timeout as it is.
    with (
        pytest.raises((anthropic.APITimeoutError, httpx2.ReadTimeout)),
        client.messages.stream(**MESSAGE, extra_headers={"x-harness-purpose": "stall"}) as s,
    ):
        for event in s:
            received.append(event.type)
    assert received[:1] == ["message_start"]
    assert "message_stop" not in received


def test_cut_mid_stream_breaks_the_sdk_stream_and_is_logged_as_a_cut(
    delayed_proxy: ProxyProcess,
) -> None:
    received: list[str] = []
    with (
        pytest.raises((anthropic.APIConnectionError, httpx2.TransportError)),
        delayed_proxy.anthropic().messages.stream(
            **MESSAGE, extra_headers={"x-harness-purpose": "cut"}
        ) as s,
    ):
        for event in s:
            received.append(event.type)
    assert received[:1] == ["message_start"] and "message_stop" not in received
    call = delayed_proxy.call_where(purpose="cut")
    assert call["outcome"] == "upstream_cut" and "cut" in call["flags"]


def test_delay_rules_can_target_an_arm(tmp_path: Path) -> None:
    stubs = tmp_path / "stubs.toml"
    stubs.write_text('schema = 1\n[[delays]]\narm = "slow"\nfirst_byte_ms = 300\n')
    slow = ProxyProcess(tmp_path / "slow", "--stubs", str(stubs), "--arm", "slow")
    fast = ProxyProcess(tmp_path / "fast", "--stubs", str(stubs), "--arm", "fast")
    try:
        timings = {}
        for name, proxy in (("slow", slow), ("fast", fast)):
            start = time.monotonic()
            proxy.openai().models.list()
            timings[name] = time.monotonic() - start
        assert timings["slow"] >= 0.3
        assert timings["fast"] < 0.3
    finally:
        slow.stop()
        fast.stop()
