"""A plain (non-streamed) live reply that the upstream cuts short reaches the arm as a broken
connection, never as mitmproxy's "502 Bad Gateway" page (which SDKs take for a vendor error and
retry), and is logged as `upstream_cut`, billed at its reservation."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from decimal import Decimal
from typing import Any
from urllib.parse import urlsplit

import anthropic
import openai
import pytest

from tests.fakevendor.server import FakeVendor
from tests.proxy.live_helpers import start_live_proxy
from tests.proxy.proxy_process import ProxyProcess

pytestmark = pytest.mark.integration

HAIKU = "claude-haiku-4-5"
USER: list[Any] = [{"role": "user", "content": "Name a lighthouse."}]
CUTS = ["cut_bytes=25", "chunked;cut_bytes=25"]  # short of content-length; no last chunk


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProxyProcess]:
    with FakeVendor() as vendor:
        proxy = start_live_proxy(tmp_path_factory.mktemp("cutplain"), vendor)
        yield proxy
        proxy.stop()


def _cut_call(proxy: ProxyProcess, behaviour: str) -> dict[str, Any]:
    for call in reversed(proxy.calls(at_least=1)):
        if call["outcome"] == "upstream_cut":
            return call
    raise AssertionError(f"no upstream_cut call logged for {behaviour}")


@pytest.mark.parametrize("behaviour", CUTS)
def test_the_sdk_sees_a_broken_connection_and_the_call_is_billed_at_its_reservation(
    live: ProxyProcess, behaviour: str
) -> None:
    before = len(live.calls())
    with pytest.raises(anthropic.APIConnectionError):
        live.anthropic().messages.create(
            model=HAIKU, max_tokens=50, messages=USER, extra_headers={"x-fake-behaviour": behaviour}
        )
    with pytest.raises(openai.APIConnectionError):
        live.openai().chat.completions.create(
            model="gpt-4.1-mini", messages=USER, extra_headers={"x-fake-behaviour": behaviour}
        )
    calls = live.calls(at_least=before + 2, timeout=15)[before:]
    assert [c["outcome"] for c in calls] == ["upstream_cut", "upstream_cut"]
    for call in calls:
        assert "billed_at_reservation" in call["flags"]
        assert Decimal(call["cost_usd"]) == Decimal(call["reserved_usd"]) > 0


@pytest.mark.parametrize("behaviour", CUTS)
def test_a_raw_client_gets_no_502_page(live: ProxyProcess, behaviour: str) -> None:
    url = urlsplit(live.anthropic_base)
    body = json.dumps({"model": HAIKU, "max_tokens": 50, "messages": USER}).encode()
    head = (
        f"POST {url.path}/v1/messages HTTP/1.1\r\nhost: {url.netloc}\r\n"
        f"content-type: application/json\r\ncontent-length: {len(body)}\r\n"
        f"x-api-key: placeholder\r\nanthropic-version: 2023-06-01\r\n"
        f"x-fake-behaviour: {behaviour}\r\n\r\n"
    ).encode()
    received = b""
    with socket.create_connection((url.hostname or "127.0.0.1", url.port or 80), timeout=15) as s:
        s.sendall(head + body)
        try:
            while chunk := s.recv(65536):
                received += chunk
        except ConnectionResetError:
            pass  # a reset is a broken connection too
    assert b"502" not in received and b"Bad Gateway" not in received, received[:300]
    # Whatever arrived is at most the vendor's own cut reply: never a complete response.
    assert not received or received.startswith(b"HTTP/1.1 200")
    assert _cut_call(live, behaviour)["status"] == 200
