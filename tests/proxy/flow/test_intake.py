"""proxy.flow.intake: hostile JSON and wrong-typed fields are refused with the
vendor's 400 before anything (hash, stubs, live metering) reads the body."""

from __future__ import annotations

import json
from typing import Any

import pytest

from proxy.flow.callstate import CallState
from proxy.flow.intake import intake
from rundir.calls.masking import DEFAULT_BODY_MASKS, hash_masked
from vendors.hosts import Vendor
from vendors.requests.body import check_body

HAIKU = "claude-haiku-4-5-20251001"
GOOD_ANTHROPIC: dict[str, Any] = {
    "model": HAIKU,
    "max_tokens": 16,
    "messages": [{"role": "user", "content": "hi"}],
}
GOOD_OPENAI: dict[str, Any] = {
    "model": "gpt-4.1-mini",
    "messages": [{"role": "user", "content": "hi"}],
}
PATHS = {"anthropic": "/v1/messages", "openai": "/v1/chat/completions"}


def run_intake(vendor: Vendor, raw: bytes, **kw: Any) -> tuple[CallState, dict[str, Any] | None]:
    state = CallState(vendor, PATHS[vendor], "POST", "arm", "", 0.0)
    reply = intake(state, raw, DEFAULT_BODY_MASKS, 32 * 1024 * 1024, None, check=check_body, **kw)
    return state, (json.loads(reply.body) | {"status": reply.status} if reply else None)


def nested(depth: int) -> bytes:
    body = json.dumps(GOOD_ANTHROPIC)[:-1]
    return (body + ', "x": ' + "[" * depth + "]" * depth + "}").encode()


def with_field(base: dict[str, Any], **fields: Any) -> bytes:
    return json.dumps({**base, **fields}).encode()


def replace_value(base: dict[str, Any], field: str, literal: str) -> bytes:
    """`base` with `field` set to a raw JSON literal json.dumps cannot write (1e400, a bigint)."""
    return with_field(base, **{field: "@@"}).replace(b'"@@"', literal.encode())


# The eleven request kinds that crashed the live addon (issue 8), as raw bodies.
CRASHERS: dict[str, tuple[Vendor, bytes]] = {
    "lone surrogate": ("anthropic", with_field(GOOD_ANTHROPIC).replace(b'"hi"', b'"\\ud800"')),
    "900 deep": ("anthropic", nested(900)),
    "100,000 deep": ("anthropic", nested(100_000)),
    "5,000-digit integer": ("anthropic", replace_value(GOOD_ANTHROPIC, "max_tokens", "9" * 5000)),
    "max_tokens -1": ("anthropic", with_field(GOOD_ANTHROPIC, max_tokens=-1)),
    "max_tokens 1e400": ("anthropic", replace_value(GOOD_ANTHROPIC, "max_tokens", "1e400")),
    "service_tier {}": ("openai", with_field(GOOD_OPENAI, service_tier={})),
    "speed []": ("anthropic", with_field(GOOD_ANTHROPIC, speed=[])),
    "stream_options yes": ("openai", with_field(GOOD_OPENAI, stream=True, stream_options="yes")),
    "inference_geo []": ("anthropic", with_field(GOOD_ANTHROPIC, inference_geo=[])),
    "service_tier [] (anthropic)": ("anthropic", with_field(GOOD_ANTHROPIC, service_tier=[])),
}


@pytest.mark.parametrize("kind", CRASHERS)
def test_each_crashing_kind_is_the_vendors_400(kind: str) -> None:
    vendor, raw = CRASHERS[kind]
    state, reply = run_intake(vendor, raw)
    assert reply is not None and reply["status"] == 400
    if vendor == "anthropic":
        assert reply["type"] == "error"
        assert reply["error"]["type"] == "invalid_request_error"
    else:
        assert reply["error"]["type"] == "invalid_request_error"
    assert state.outcome == "bad_request"
    assert state.request_hash  # the refusal is still logged under a hash


def test_a_valid_request_passes_and_is_hashed_as_before() -> None:
    state, reply = run_intake("anthropic", json.dumps(GOOD_ANTHROPIC).encode())
    assert reply is None
    assert state.body == GOOD_ANTHROPIC
    assert state.request_hash == hash_masked("POST", "anthropic.messages", GOOD_ANTHROPIC)


def test_an_int64_seed_past_the_json_float_range_hashes() -> None:
    # RFC 8785 refuses integers past 2**53; OpenAI's seed is an int64.
    state, reply = run_intake("openai", with_field(GOOD_OPENAI, seed=2**62))
    assert reply is None
    other, _ = run_intake("openai", with_field(GOOD_OPENAI, seed=2**62 + 1))
    assert state.request_hash and state.request_hash != other.request_hash


@pytest.mark.parametrize(
    ("vendor", "fields", "param"),
    [
        ("anthropic", {"max_tokens": 0}, None),
        ("anthropic", {"max_tokens": 2.5}, None),
        ("anthropic", {"max_tokens": True}, None),
        ("anthropic", {"messages": "hi"}, None),
        ("anthropic", {"messages": []}, None),
        ("anthropic", {"messages": [{"role": "system", "content": "x"}]}, None),
        ("anthropic", {"tools": {}}, None),
        ("anthropic", {"temperature": "hot"}, None),
        ("anthropic", {"top_k": -1}, None),
        ("anthropic", {"metadata": []}, None),
        ("anthropic", {"stream": "yes"}, None),
        (
            "anthropic",
            {"messages": [{"role": "user", "content": [{"type": "image", "source": []}]}]},
            None,
        ),
        ("openai", {"max_tokens": -1}, "max_tokens"),
        ("openai", {"max_completion_tokens": 1.5}, "max_completion_tokens"),
        ("openai", {"n": "2"}, "n"),
        ("openai", {"stream": 1}, "stream"),
        ("openai", {"stream": True, "stream_options": {"include_usage": "yes"}}, "include_usage"),
        ("openai", {"temperature": [1]}, "temperature"),
        ("openai", {"presence_penalty": 3}, "presence_penalty"),
        ("openai", {"tools": "search"}, "tools"),
        ("openai", {"messages": [{"role": "robot", "content": "x"}]}, "messages[0].role"),
        ("openai", {"stop": [1]}, "stop"),
    ],
)
def test_fields_the_vendor_refuses_are_refused_in_intake(
    vendor: Vendor, fields: dict[str, Any], param: str | None
) -> None:
    base = GOOD_ANTHROPIC if vendor == "anthropic" else GOOD_OPENAI
    state, reply = run_intake(vendor, with_field(base, **fields))
    assert reply is not None and reply["status"] == 400, fields
    if param is not None:
        assert reply["error"]["param"] == param
    assert state.outcome == "bad_request"


def test_a_compressed_body_is_refused_not_guessed_at() -> None:
    _, reply = run_intake("openai", json.dumps(GOOD_OPENAI).encode(), content_encoding="gzip")
    assert reply is not None and reply["status"] == 400
    assert "uncompressed" in reply["error"]["message"]
    assert (
        run_intake("openai", json.dumps(GOOD_OPENAI).encode(), content_encoding="identity")[1]
        is None
    )
