"""Framing attacks (Content-Length with Transfer-Encoding and friends) get the vendor's error JSON,
never mitmproxy's HTML page: raw bytes sent by socket to a real proxy process, in record mode and
in live mode in front of the fake vendor, which must receive nothing. Each refusal is in
calls.jsonl as the arm's `bad_request`, and the proxy serves the next call."""

from __future__ import annotations

import contextlib
import json
import socket
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from proxy.flow.framing import HEAD_LIMIT, Refusal, head_refusal, parse_refusal
from tests.fakevendor.server import FakeVendor
from tests.proxy.app.test_hostile_inputs import assert_healthy
from tests.proxy.flow.test_intake import GOOD_ANTHROPIC, GOOD_OPENAI
from tests.proxy.live_helpers import start_live_proxy
from tests.proxy.proxy_process import ProxyProcess

ROUTES = {"openai": "/openai/v1/chat/completions", "anthropic": "/anthropic/v1/messages"}
BODIES = {
    "openai": json.dumps(GOOD_OPENAI).encode(),
    "anthropic": json.dumps(GOOD_ANTHROPIC).encode(),
}


def chunked(body: bytes) -> bytes:
    return b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)


def attack(name: str, vendor: str) -> bytes:
    """The raw request of attack `name` on `vendor`'s route: a valid body, hostile framing."""
    body = BODIES[vendor]
    n = len(body)
    head = (
        f"POST {ROUTES[vendor]} HTTP/1.1\r\nhost: proxy\r\ncontent-type: application/json\r\n"
        "anthropic-version: 2023-06-01\r\nconnection: close\r\n"
    ).encode()
    framings: dict[str, bytes] = {
        "content-length and transfer-encoding": b"content-length: %d\r\n"
        b"transfer-encoding: chunked\r\n\r\n%s" % (n, chunked(body)),
        "transfer-encoding and content-length": b"transfer-encoding: chunked\r\n"
        b"content-length: %d\r\n\r\n%s" % (n, chunked(body)),
        "two content-lengths that differ": b"content-length: %d\r\ncontent-length: %d\r\n\r\n%s"
        % (n, n + 1, body),
        "two equal content-lengths": b"content-length: %d\r\ncontent-length: %d\r\n\r\n%s"
        % (n, n, body),
        "a content-length list": b"content-length: %d, %d\r\n\r\n%s" % (n, n, body),
        "a content-length that is no number": b"content-length: 12abc\r\n\r\n" + body,
        "a negative content-length": b"content-length: -1\r\n\r\n" + body,
        "transfer-encoding gzip": b"transfer-encoding: gzip\r\n\r\n" + body,
        "transfer-encoding gzip, chunked": b"transfer-encoding: gzip, chunked\r\n\r\n"
        + chunked(body),
        "transfer-encoding chunked twice": b"transfer-encoding: chunked, chunked\r\n\r\n"
        + chunked(body),
        "two transfer-encoding headers": b"transfer-encoding: chunked\r\n"
        b"transfer-encoding: chunked\r\n\r\n" + chunked(body),
        "an unknown transfer-encoding": b"transfer-encoding: xchunked\r\n\r\n" + body,
        "a bad chunk size": b"transfer-encoding: chunked\r\n\r\nzz\r\n%s\r\n0\r\n\r\n" % body,
        "a chunk without its line end": b"transfer-encoding: chunked\r\n\r\n%x\r\n%sXX0\r\n\r\n"
        % (n, body),
        "a space before the colon": b"content-length : %d\r\n\r\n%s" % (n, body),
        "a header line without a colon": b"no colon here\r\ncontent-length: %d\r\n\r\n%s"
        % (n, body),
        "a folded header": b"x-note: a\r\n b\r\ncontent-length: %d\r\n\r\n%s" % (n, body),
        "an oversize header": b"x-junk: %s\r\ncontent-length: %d\r\n\r\n%s"
        % (b"a" * (HEAD_LIMIT + 10), n, body),
    }
    return head + framings[name]


ATTACKS = [
    ("content-length and transfer-encoding", "openai"),
    ("content-length and transfer-encoding", "anthropic"),
    ("transfer-encoding and content-length", "openai"),
    ("two content-lengths that differ", "anthropic"),
    ("two equal content-lengths", "openai"),
    ("a content-length list", "openai"),
    ("a content-length that is no number", "anthropic"),
    ("a negative content-length", "openai"),
    ("transfer-encoding gzip", "openai"),
    ("transfer-encoding gzip, chunked", "anthropic"),
    ("transfer-encoding chunked twice", "openai"),
    ("two transfer-encoding headers", "openai"),
    ("an unknown transfer-encoding", "anthropic"),
    ("a bad chunk size", "openai"),
    ("a bad chunk size", "anthropic"),
    ("a chunk without its line end", "openai"),
    ("a space before the colon", "openai"),
    ("a header line without a colon", "anthropic"),
    ("a folded header", "openai"),
    ("an oversize header", "anthropic"),
]


@pytest.fixture(scope="module")
def live_pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ProxyProcess, Any]]:
    with FakeVendor() as vendor:
        proxy = start_live_proxy(tmp_path_factory.mktemp("framing"), vendor, name="live")
        yield proxy, vendor
        proxy.stop()


@pytest.fixture(scope="module", params=["record", "live"])
def target(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[ProxyProcess, Any]]:
    if request.param == "live":
        yield request.getfixturevalue("live_pair")
        return
    proxy = ProxyProcess(tmp_path_factory.mktemp("framing-record") / "run")
    yield proxy, None
    proxy.stop()


def exchange(proxy: ProxyProcess, raw: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send `raw`, read until the proxy closes; (status, headers, body)."""
    url = httpx.URL(proxy.base)
    with socket.create_connection((url.host, url.port or 80), timeout=30) as sock:
        # Refused before it was all read, the send may break: the answer is still waiting.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            sock.sendall(raw)
        data = b""
        # A close with unread bytes resets the connection: what was read before it stands.
        with contextlib.suppress(ConnectionResetError):
            while chunk := sock.recv(65536):
                data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(lines[0].split()[1]), headers, body


@pytest.mark.integration
@pytest.mark.parametrize(("name", "vendor"), ATTACKS)
def test_a_framing_attack_gets_the_vendors_400_and_is_logged(
    target: tuple[ProxyProcess, FakeVendor | None], name: str, vendor: str
) -> None:
    proxy, upstream = target
    before = len(proxy.calls())
    forwarded = len(upstream.requests) if upstream else 0
    status, headers, body = exchange(proxy, attack(name, vendor))
    assert status == 400, body[:300]
    assert headers["content-type"] == "application/json" and b"<html" not in body.lower()
    error = json.loads(body)
    if vendor == "anthropic":
        assert error["type"] == "error" and error["error"]["type"] == "invalid_request_error"
    else:
        assert error["error"]["type"] == "invalid_request_error" and error["error"]["code"] is None
    assert error["error"]["message"]
    call = proxy.calls(at_least=before + 1)[-1]
    assert len(proxy.calls()) == before + 1, "logged once"
    assert (call["status"], call["outcome"], call["vendor"]) == (400, "bad_request", vendor)
    assert call["path"] == ROUTES[vendor].removeprefix(f"/{vendor}")
    assert call["cost_usd"] == "0" and call["reserved_usd"] == "0"
    # Logged under the proxy's own mode, though the refusal never reached live mode's path.
    assert call["mode"] == ("live" if upstream is not None else "record")
    if upstream is not None:
        assert len(upstream.requests) == forwarded, "nothing reaches the vendor"
    assert_healthy(proxy)


@pytest.mark.integration
def test_an_attack_pipelined_behind_a_good_request_is_refused_alone(
    target: tuple[ProxyProcess, FakeVendor | None],
) -> None:
    """A good request and an attack sent at once on one kept-alive connection: the first is
    served, the second (read within the first's exchange) gets the vendor's 400, once."""
    proxy, _ = target
    before = len(proxy.calls())
    body = BODIES["openai"]
    good = (
        b"POST /openai/v1/chat/completions HTTP/1.1\r\nhost: proxy\r\n"
        b"content-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)
    )
    url = httpx.URL(proxy.base)
    with socket.create_connection((url.host, url.port or 80), timeout=30) as sock:
        sock.sendall(good + attack("content-length and transfer-encoding", "openai"))
        data = b""
        with contextlib.suppress(ConnectionResetError):
            while chunk := sock.recv(65536):
                data += chunk
    assert data.startswith(b"HTTP/1.1 200 ") and b"<html" not in data.lower()
    assert data.count(b"HTTP/1.1 400 ") == 1 and data.count(b"HTTP/1.1 ") == 2, data[-600:]
    calls = proxy.calls(at_least=before + 2)[before:]
    assert [c["outcome"] for c in calls] == ["ok", "bad_request"], calls
    assert_healthy(proxy)


@pytest.mark.integration
def test_a_client_that_hangs_up_mid_body_is_no_bad_request(
    target: tuple[ProxyProcess, FakeVendor | None],
) -> None:
    """A body cut by the arm's own hang-up is not a framing error: nothing answered, nothing
    logged as the arm's bad request."""
    proxy, _ = target
    before = len(proxy.calls())
    url = httpx.URL(proxy.base)
    with socket.create_connection((url.host, url.port or 80), timeout=30) as sock:
        sock.sendall(
            b"POST /openai/v1/chat/completions HTTP/1.1\r\nhost: p\r\n"
            b"transfer-encoding: chunked\r\n\r\n10\r\nabc"
        )
        sock.shutdown(socket.SHUT_WR)
        assert sock.recv(65536) == b""
    assert_healthy(proxy)
    assert all(c["outcome"] != "bad_request" for c in proxy.calls()[before:])


@pytest.mark.parametrize(
    ("head", "refused"),
    [
        (b"POST / HTTP/1.1\r\ncontent-length: 5\r\n\r\n", None),
        (b"POST / HTTP/1.1\r\ntransfer-encoding: Chunked\r\n\r\n", None),
        (b"POST / HTTP/1.1\r\ncontent-length: 0\r\n\r\n", None),
        (b"POST / HTTP/1.1\r\ncontent-length: 05\r\n\r\n", "not a length"),
        (b"POST / HTTP/1.0\r\ntransfer-encoding: chunked\r\n\r\n", "not accepted"),
        (b"POST / HTTP/1.1\r\ncontent-length: 1\r\ntransfer-encoding: chunked\r\n\r\n", "both"),
        (b"POST / HTTP/1.1\r\nx\x00y: 1\r\n\r\n", "not a valid token"),
        (b"POST / HTTP/1.1\r\nx-a: " + b"a" * HEAD_LIMIT, "larger than"),
        (b"POST / HTTP/1.1\r\nx-a: " + b"a" * 100, None),  # not all here yet
    ],
)
def test_head_refusal_reads_the_framing_headers(head: bytes, refused: str | None) -> None:
    found = head_refusal(head)
    if refused is None:
        assert found is None
    else:
        assert found is not None and found.status == 400 and refused in found.reason


def test_a_refusal_travels_in_the_error_message_and_nothing_else_does() -> None:
    from proxy.flow.framing import REFUSAL_MARK

    assert parse_refusal(f"{REFUSAL_MARK}400 bad\nframing") == Refusal(400, "bad\nframing")
    assert parse_refusal("Client disconnected.") is None
    assert parse_refusal("400 " + REFUSAL_MARK) is None


def test_the_attacked_routes_are_real_routes() -> None:
    # The route table the attacks use is the one the addon reads (a renamed route would make
    # every attack a 404 and the test blind).
    from vendors.routes import find_route

    for vendor, path in ROUTES.items():
        assert find_route(vendor, "POST", path.removeprefix(f"/{vendor}")) is not None


@pytest.mark.parametrize(
    ("code", "status", "path", "shape"),
    [
        ("DESTINATION_UNKNOWN", 400, "/anthropic/v1/messages", "anthropic"),
        ("REQUEST_VALIDATION_FAILED", 400, "/openai/v1/chat/completions", "openai"),
        ("CONNECT_FAILED", 502, "/openai/v1/embeddings", "openai"),
    ],
)
def test_a_refusal_after_the_request_was_read_is_the_vendors_too(
    code: str, status: int, path: str, shape: str
) -> None:
    """mitmproxy's HTTP/1 server layer itself (as installed), for the refusals it sends after a
    hook has seen the request (its header validation, an unknown destination): not its page."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from mitmproxy import http, options
        from mitmproxy.proxy import commands
        from mitmproxy.proxy.context import Context
        from mitmproxy.proxy.layers.http._events import ErrorCode, ResponseProtocolError
        from mitmproxy.proxy.layers.http._http1 import Http1Server
        from mitmproxy.test import tflow

    from proxy.flow.framing import install

    install()
    server = Http1Server(Context(tflow.tclient_conn(), options.Options()))
    server.request = http.Request.make("POST", f"http://proxy{path}")
    refused = ResponseProtocolError(1, "refused <b>here</b>", getattr(ErrorCode, code))
    sent = list(server.send(refused))
    data = [c.data for c in sent if isinstance(c, commands.SendData)]
    assert len(data) == 1 and isinstance(sent[-1], commands.CloseConnection)
    head, _, body = data[0].partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 %d " % status) and b"content-type: application/json" in head
    error = json.loads(body)
    assert ("type" in error) is (shape == "anthropic")
    assert "refused <b>here</b>" in error["error"]["message"]
