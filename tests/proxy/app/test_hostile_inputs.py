"""Bad input never crashes the addon (issue 8): hostile bodies and headers, thrown at a real proxy
process in record mode and in live mode (in front of the fake vendor), each get a vendor-shaped
JSON error with a status the vendor uses, never mitmproxy's 502 page nor a traceback; the call
log has the real status and a non-ok outcome; and the official SDK's next call still succeeds."""

from __future__ import annotations

import json
import socket
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from proxy.app.addon import HarnessAddon
from tests.fakevendor.server import FakeVendor
from tests.proxy.flow.test_intake import CRASHERS, GOOD_ANTHROPIC, GOOD_OPENAI
from tests.proxy.live_helpers import start_live_proxy
from tests.proxy.proxy_process import ProxyProcess

pytestmark = pytest.mark.integration

# Statuses the vendors (and the harness, speaking as them) answer a refused call with.
VENDOR_STATUSES = {400, 401, 402, 404, 413, 429, 500, 503}
ROUTES = {
    "anthropic": "/anthropic/v1/messages",
    "openai": "/openai/v1/chat/completions",
    "responses": "/openai/v1/responses",
    "embeddings": "/openai/v1/embeddings",
}
BASES: dict[str, dict[str, Any]] = {
    "anthropic": GOOD_ANTHROPIC,
    "openai": GOOD_OPENAI,
    "responses": {"model": "gpt-4.1-mini", "input": "hi", "max_output_tokens": 32},
    "embeddings": {"model": "text-embedding-3-small", "input": "hi"},
}
# JSON literals json.dumps cannot write, and values the metering once tripped on.
HOSTILE_LITERALS = [
    "1e400",
    "-1e400",
    "NaN",
    "Infinity",
    "9" * 5000,
    "-" + "9" * 30,
    '"\\ud800"',
    '"\\udfff\\ud800"',
    "[" * 900 + "]" * 900,
    "{}",
    "[]",
    '"yes"',
    "-1",
    "0",
    "2.5",
    "true",
    "null",
    str(2**62),
    '"' + "x" * 10_000 + '"',
]
FIELDS = [
    "model",
    "max_tokens",
    "max_completion_tokens",
    "max_output_tokens",
    "messages",
    "input",
    "n",
    "stream",
    "stream_options",
    "service_tier",
    "speed",
    "inference_geo",
    "tools",
    "tool_choice",
    "temperature",
    "top_p",
    "thinking",
    "metadata",
    "system",
    "dimensions",
    "encoding_format",
]


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProxyProcess]:
    with FakeVendor() as vendor:
        proxy = start_live_proxy(tmp_path_factory.mktemp("hostile"), vendor, name="live")
        yield proxy
        proxy.stop()


# record_proxy: the shared record-mode proxy of tests/conftest.py.
@pytest.fixture(scope="module", params=[pytest.param("record_proxy", id="record"), "live"])
def proxy(request: pytest.FixtureRequest) -> ProxyProcess:
    result: ProxyProcess = request.getfixturevalue(request.param)
    return result


def vendor_of(route: str) -> str:
    return "anthropic" if route == "anthropic" else "openai"


def send(
    proxy: ProxyProcess, route: str, body: bytes, headers: dict[str, Any] | None = None
) -> tuple[httpx.Response, dict[str, Any]]:
    """POST raw `body`; the reply and the call's record in calls.jsonl."""
    before = len(proxy.calls())
    sent = {"content-type": "application/json", **(headers or {})}
    if route == "anthropic":
        sent.setdefault("anthropic-version", "2023-06-01")
    reply = httpx.post(proxy.base + ROUTES[route], content=body, headers=sent, timeout=30)
    calls = proxy.calls(at_least=before + 1)
    assert len(calls) == before + 1, "every call, refused or not, is logged once"
    return reply, calls[-1]


def assert_vendor_refusal(reply: httpx.Response, call: dict[str, Any], route: str) -> None:
    text = reply.text
    assert "Traceback" not in text and "<html" not in text.lower(), text[:300]
    assert reply.headers.get("content-type", "").startswith("application/json"), text[:300]
    body = reply.json()
    if reply.status_code == 200:
        # A corruption that happens to be valid is served like any good call.
        assert call["outcome"] == "ok" and call["status"] == 200
        return
    assert reply.status_code in VENDOR_STATUSES, (reply.status_code, text[:300])
    if vendor_of(route) == "anthropic":
        assert body["type"] == "error" and isinstance(body["error"]["message"], str)
        expected = "api_error" if reply.status_code >= 500 else None
        assert expected is None or body["error"]["type"] == expected
    else:
        assert isinstance(body["error"]["message"], str) and body["error"]["type"]
    assert call["status"] == reply.status_code
    assert call["outcome"] not in ("ok",), call
    if reply.status_code == 400:
        assert call["outcome"] in ("bad_request", "vendor_error", "refused"), call


def assert_healthy(proxy: ProxyProcess) -> None:
    """The official SDK's next call is answered."""
    reply = proxy.anthropic().messages.create(**GOOD_ANTHROPIC)
    assert reply.content
    assert proxy.openai().chat.completions.create(**GOOD_OPENAI).choices


@pytest.mark.parametrize("kind", CRASHERS)
def test_each_kind_that_crashed_the_addon_is_refused_as_the_vendor_would(
    proxy: ProxyProcess, kind: str
) -> None:
    vendor, raw = CRASHERS[kind]
    reply, call = send(proxy, vendor, raw)
    assert reply.status_code == 400, reply.text[:300]
    assert_vendor_refusal(reply, call, vendor)
    assert call["outcome"] == "bad_request"
    assert call["cost_usd"] == "0" and call["reserved_usd"] == "0"
    assert_healthy(proxy)


def corrupted(route: str, field: str, literal: str) -> bytes:
    body = dict(BASES[route])
    body[field] = "@@corrupt@@"
    return json.dumps(body).encode().replace(b'"@@corrupt@@"', literal.encode())


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
literals = st.sampled_from(HOSTILE_LITERALS) | json_values.map(json.dumps)
bodies = st.one_of(
    st.binary(max_size=200),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.builds(corrupted, st.sampled_from(list(ROUTES)), st.sampled_from(FIELDS), literals),
)


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(route=st.sampled_from(list(ROUTES)), body=bodies)
@example(route="anthropic", body=b"")
@example(route="openai", body=b"null")
@example(route="openai", body=b'"just a string"')
@example(route="anthropic", body=b"\xef\xbb\xbf{}")
@example(route="responses", body=corrupted("responses", "max_output_tokens", "1e400"))
@example(route="embeddings", body=corrupted("embeddings", "input", '"\\ud800"'))
def test_random_hostile_bodies_get_vendor_errors(
    proxy: ProxyProcess, route: str, body: bytes
) -> None:
    reply, call = send(proxy, route, body)
    assert_vendor_refusal(reply, call, route)


GOOD = json.dumps(GOOD_OPENAI).encode()
HOSTILE_HEADERS: dict[str, dict[str, Any]] = {
    "huge header": {"x-junk": "a" * 60_000},
    "many headers": {f"x-junk-{i}": "b" * 100 for i in range(200)},
    "purpose too long": {"x-harness-purpose": "p" * 5000},
    "purpose with odd bytes": {"x-harness-purpose": b"main\xff\xfe"},
    "purpose path": {"x-harness-purpose": "../../etc/passwd"},
    "text content type": {"content-type": "text/plain"},
    "multipart content type": {"content-type": "multipart/form-data; boundary=x"},
    "gzip claimed, plain body": {"content-encoding": "gzip"},
    "brotli claimed": {"content-encoding": "br"},
    "stacked encodings": {"content-encoding": "gzip, deflate"},
}


@pytest.mark.parametrize("case", HOSTILE_HEADERS)
def test_hostile_headers_get_vendor_errors(proxy: ProxyProcess, case: str) -> None:
    reply, call = send(proxy, "openai", GOOD, HOSTILE_HEADERS[case])
    assert_vendor_refusal(reply, call, "openai")
    if "purpose" in case or "encoding" in case or "gzip" in case:
        assert reply.status_code == 400 and call["outcome"] == "bad_request"
    assert_healthy(proxy)


def raw_request(proxy: ProxyProcess, head: bytes, body: bytes) -> tuple[int, bytes, bytes]:
    """Send bytes no HTTP client would (a request line with stray bytes); (status, head, body)."""
    url = httpx.URL(proxy.base)
    with socket.create_connection((url.host, url.port or 80), timeout=30) as sock:
        sock.sendall(head + b"content-length: %d\r\nconnection: close\r\n\r\n" % len(body))
        sock.sendall(body)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head_part, _, rest = data.partition(b"\r\n\r\n")
    return int(head_part.split()[1]), head_part, rest


def test_stray_bytes_in_the_path_are_refused_and_logged(proxy: ProxyProcess) -> None:
    before = len(proxy.calls())
    status, head, body = raw_request(
        proxy,
        b"POST /openai/v1/\xff\xfe/chat HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n",
        GOOD,
    )
    call = proxy.calls(at_least=before + 1)[-1]
    assert status == 404, head
    assert b"<html" not in body.lower() and json.loads(body)["error"]["type"]
    assert call["status"] == 404 and call["outcome"] == "bad_request"
    assert_healthy(proxy)


async def test_an_exception_anywhere_in_the_request_hook_is_the_vendors_500(
    tmp_path: Path,
) -> None:
    """In-process, with mitmproxy's test kit: a component that raises (a bug the fuzz has not
    found yet) gives the vendor's 500 api_error, logged as proxy_error, never a 502."""
    with warnings.catch_warnings():
        # mitmproxy's master imports ldap3, which trips pyasn1's DeprecationWarning.
        warnings.simplefilter("ignore", DeprecationWarning)
        from mitmproxy.test import taddons, tflow
    addon = HarnessAddon()

    def broken(_state: object) -> None:
        raise RuntimeError("a bug in a stub")

    with taddons.context(addon) as tctx:
        tctx.configure(addon, harness_run_dir=str(tmp_path), harness_run_id="r")
        addon.record.answer = broken  # type: ignore[method-assign,assignment]
        flow = tflow.tflow()
        flow.request.method, flow.request.path = "POST", "/anthropic/v1/messages"
        flow.request.content = json.dumps(GOOD_ANTHROPIC).encode()
        await addon.request(flow)
        assert flow.response is not None and flow.response.status_code == 500
        body = json.loads(flow.response.content or b"")
        assert body == {
            "type": "error",
            "error": {"type": "api_error", "message": body["error"]["message"]},
        }
        assert b"a bug in a stub" not in (flow.response.content or b"")
        addon.response(flow)
        call = json.loads((tmp_path / "calls.jsonl").read_text().splitlines()[-1])
        assert call["status"] == 500 and call["outcome"] == "proxy_error"
        assert "proxy_exception" in call["flags"]
        assert addon.sink.failed is None  # the proxy keeps serving
        await addon.done()


async def test_a_failure_while_the_reply_streams_breaks_the_call_instead_of_relaying_it(
    tmp_path: Path,
) -> None:
    """A live reply the proxy can no longer meter or redact (its responseheaders step raised)
    is not relayed: the flow is killed, and the call is logged as the proxy's failure."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from mitmproxy.test import taddons, tflow

    from proxy.flow.callstate import CallState
    from proxy.modes.live import LiveMode

    class BrokenLive:
        def responseheaders(self, _flow: object, _state: object) -> None:
            raise KeyError("a bug in the usage tap")

        def failed(self, _flow: object, _state: object) -> None:
            pass  # settling is proxy.live.forwarder's (tested there); here: the flow and the log

        def shutdown(self) -> list[object]:
            return []

    addon = HarnessAddon()
    with taddons.context(addon) as tctx:
        tctx.configure(addon, harness_run_dir=str(tmp_path), harness_run_id="r")
        addon.mode = LiveMode(BrokenLive(), None, addon.record)  # type: ignore[arg-type]
        flow = tflow.tflow(resp=True)
        flow.live = True
        state = CallState("anthropic", "/v1/messages", "POST", "arm", "main", 0.0)
        state.live = object()
        flow.metadata["harness"] = state
        addon.responseheaders(flow)
        assert flow.error is not None  # killed: nothing more is relayed
        addon.error(flow)
        call = json.loads((tmp_path / "calls.jsonl").read_text().splitlines()[-1])
        assert call["outcome"] == "proxy_error" and "proxy_exception" in call["flags"]
        assert addon.sink.failed is None
        await addon.done()
