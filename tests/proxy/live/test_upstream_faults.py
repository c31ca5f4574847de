"""A vendor that never answers (connection refused, or reset before its headers) reaches the arm
as a broken connection, as the vendor itself would, never as mitmproxy's "502 Bad Gateway" HTML
page (which SDKs take for a vendor reply). A vendor that took the request may bill it: booked at
the reservation; one that was never reached bills nothing: booked at 0 and flagged."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import anthropic
import openai
import pytest

from tests.fakevendor.server import FakeVendor
from tests.proxy.live_helpers import STUDY_KEYS
from tests.proxy.proxy_process import ProxyProcess

pytestmark = pytest.mark.integration

USER: list[Any] = [{"role": "user", "content": "Name a lighthouse."}]


def _closed_port() -> int:
    # Bound, never listening: a connect is refused at once, and no other test takes the port
    # while this socket holds it.
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = int(sock.getsockname()[1])
    _held.append(sock)
    return port


_held: list[socket.socket] = []


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory, vendor: FakeVendor) -> Iterator[ProxyProcess]:
    tmp = tmp_path_factory.mktemp("faults")
    dead = f"http://127.0.0.1:{_closed_port()}"
    proxy = ProxyProcess(
        tmp / "run",
        "--mode",
        "live",
        "--cap",
        "5",
        "--ledger",
        str(tmp / "ledger.jsonl"),
        "--upstream",
        f"anthropic={dead}",
        "--upstream",
        f"openai={vendor.url}",
        env=STUDY_KEYS,
    )
    yield proxy
    proxy.stop()
    for sock in _held:
        sock.close()


def _last_call(proxy: ProxyProcess, before: int) -> dict[str, Any]:
    return proxy.calls(at_least=before + 1, timeout=15)[before]


def test_an_unreachable_vendor_is_a_broken_connection_booked_at_zero(live: ProxyProcess) -> None:
    before = len(live.calls())
    with pytest.raises(anthropic.APIConnectionError):
        live.anthropic().messages.create(model="claude-haiku-4-5", max_tokens=50, messages=USER)
    call = _last_call(live, before)
    assert call["outcome"] == "upstream_cut"
    assert "cut:upstream_unreachable" in call["flags"]
    assert Decimal(call["cost_usd"]) == 0 < Decimal(call["reserved_usd"])


def test_a_reset_before_the_headers_is_a_broken_connection_booked_at_the_reservation(
    live: ProxyProcess,
) -> None:
    before = len(live.calls())
    with pytest.raises(openai.APIConnectionError):
        live.openai().chat.completions.create(
            model="gpt-4.1-mini", messages=USER, extra_headers={"x-fake-behaviour": "reset"}
        )
    call = _last_call(live, before)
    assert call["outcome"] == "upstream_cut"
    assert "billed_at_reservation" in call["flags"]
    assert Decimal(call["cost_usd"]) == Decimal(call["reserved_usd"]) > 0
    # The proxy keeps serving: the next call is answered by the vendor.
    reply = live.openai().chat.completions.create(model="gpt-4.1-mini", messages=USER)
    assert reply.choices[0].message.content


def test_no_502_page_reaches_a_raw_client(live: ProxyProcess) -> None:
    body = b'{"model":"claude-haiku-4-5","max_tokens":5,"messages":[{"role":"user","content":"x"}]}'
    host, port = live.anthropic_base.removeprefix("http://").split("/")[0].split(":")
    path = "/" + live.anthropic_base.removeprefix("http://").partition("/")[2].rstrip("/")
    request = (
        f"POST {path}/v1/messages HTTP/1.1\r\nhost: {host}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\n\r\n"
    ).encode() + body
    with socket.create_connection((host, int(port)), timeout=15) as sock:
        sock.sendall(request)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    assert b"502" not in received and b"Bad Gateway" not in received
