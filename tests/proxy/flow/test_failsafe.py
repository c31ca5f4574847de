"""proxy.flow.failsafe: the harness's own headers are checked, and text mitmproxy decoded from stray
bytes can still be logged."""

from __future__ import annotations

import json

import pytest

from proxy.flow.callstate import CallState
from proxy.flow.failsafe import (
    INTERNAL_ERROR_FLAG,
    bad_purpose,
    internal_reply,
    mark_failed,
    safe_text,
)


def state(purpose: str = "") -> CallState:
    return CallState("openai", "/v1/chat/completions", "POST", "arm", purpose, 0.0)


@pytest.mark.parametrize("purpose", ["main", "embedding", "guard.v2", "utility:summary", "a-b_c"])
def test_usual_purposes_pass(purpose: str) -> None:
    assert bad_purpose(state(purpose)) is None


@pytest.mark.parametrize("purpose", ["p" * 65, "../../etc", "main\udcff", "two words", "é"])
def test_other_purposes_are_the_vendors_400(purpose: str) -> None:
    call = state(purpose)
    reply = bad_purpose(call)
    assert reply is not None and reply.status == 400
    assert "X-Harness-Purpose" in json.loads(reply.body)["error"]["message"]
    assert call.outcome == "bad_request" and call.purpose == ""


def test_a_failure_is_the_vendors_500_and_flagged() -> None:
    call = state()
    try:
        raise RuntimeError("secret detail")
    except RuntimeError:
        mark_failed(call, "request")
    reply = internal_reply(call)
    body = json.loads(reply.body)
    assert reply.status == 500 and body["error"]["type"] == "server_error"
    assert "secret detail" not in reply.body.decode()
    assert call.outcome == "proxy_error" and INTERNAL_ERROR_FLAG in call.flags


def test_safe_text_escapes_lone_surrogates_only() -> None:
    assert safe_text("/v1/chat") == "/v1/chat"
    assert safe_text("caf\u00e9") == "caf\u00e9"
    assert safe_text("/v1/\udcff").encode("utf-8") == b"/v1/\\udcff"
