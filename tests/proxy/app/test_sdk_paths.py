"""What the ecosystem's clients find (issue 21): `harness proxy serve` prints OPENAI_API_BASE
beside OPENAI_BASE_URL, the AI SDK's `/anthropic/messages` form (its base URL expects /v1) is
served as Anthropic's /v1/messages, and a 404's call record keeps the model its body named."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.fakevendor.server import FakeVendor
from tests.proxy.live_helpers import start_live_proxy
from tests.proxy.proxy_process import ProxyProcess

pytestmark = pytest.mark.integration

HAIKU = "claude-haiku-4-5-20251001"
HEADERS = {"x-api-key": "placeholder", "anthropic-version": "2023-06-01"}
BODY = {"model": HAIKU, "max_tokens": 32, "messages": [{"role": "user", "content": "hi"}]}


def test_the_exports_name_the_openai_base_both_ways(record_proxy: ProxyProcess) -> None:
    exports = record_proxy.exports
    assert exports["OPENAI_API_BASE"] == exports["OPENAI_BASE_URL"]
    assert exports["OPENAI_API_BASE"].endswith("/openai/v1")


def test_the_ai_sdk_anthropic_form_is_served_as_v1(record_proxy: ProxyProcess) -> None:
    base = record_proxy.anthropic_base  # what ANTHROPIC_BASE_URL says; the AI SDK adds /messages
    reply = httpx.post(f"{base}/messages", json=BODY, headers=HEADERS, timeout=10)
    assert reply.status_code == 200, reply.text
    assert reply.json()["type"] == "message" and reply.json()["model"] == HAIKU
    logged = record_proxy.call_where(route="anthropic.messages", path="/v1/messages")
    assert logged["status"] == 200
    # The same request by the official SDK's path is the same request: the same reply bytes.
    official = httpx.post(f"{base}/v1/messages", json=BODY, headers=HEADERS, timeout=10)
    assert official.content == reply.content
    count = {k: v for k, v in BODY.items() if k != "max_tokens"}
    counted = httpx.post(f"{base}/messages/count_tokens", json=count, headers=HEADERS, timeout=10)
    assert counted.status_code == 200 and counted.json()["input_tokens"] > 0
    models = httpx.get(f"{base}/models", headers=HEADERS, timeout=10)
    assert models.status_code == 200 and models.json()["data"]


def test_a_404_keeps_the_model_its_body_named(record_proxy: ProxyProcess) -> None:
    base = record_proxy.anthropic_base
    reply = httpx.post(f"{base}/v1/messages/nowhere", json=BODY, headers=HEADERS, timeout=10)
    assert reply.status_code == 404
    assert reply.json()["error"]["type"] == "not_found_error"
    logged = record_proxy.call_where(path="/v1/messages/nowhere")
    assert (logged["status"], logged["outcome"], logged["model_requested"]) == (
        404,
        "bad_request",
        HAIKU,
    )
    # A body that is not an object names no model, and the 404 still stands.
    bare = httpx.post(f"{base}/v1/nowhere", content=b"[1]", headers=HEADERS, timeout=10)
    assert bare.status_code == 404
    assert record_proxy.call_where(path="/v1/nowhere")["model_requested"] is None


def test_live_mode_forwards_the_ai_sdk_form_to_the_vendors_v1_path(
    tmp_path: Path, vendor: FakeVendor
) -> None:
    vendor.reset()
    proxy = start_live_proxy(tmp_path, vendor)
    try:
        reply = httpx.post(
            f"{proxy.anthropic_base}/messages", json=BODY, headers=HEADERS, timeout=30
        )
        assert reply.status_code == 200, reply.text
        (received,) = vendor.wait_for_requests(1)
        assert (received.method, received.path) == ("POST", "/v1/messages")
        assert received.body["model"] == HAIKU
    finally:
        proxy.stop()
