"""vendors.requests.body: every route that takes a body has its checks, and each one refuses a
body of the wrong shape with the vendor's 400 (proxy.flow.intake runs them in both modes)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stubs.request import StubRequest
from stubs.routes import stub_handler
from stubs.rules.context import StubContext
from vendors.errors import VendorRequestError
from vendors.requests.body import CHECKS, check_body
from vendors.routes import ROUTES, find_route

GOOD: dict[str, dict[str, Any]] = {
    "anthropic.messages": {
        "model": "claude-haiku-4-5-20251001",
        "max_tokens": 16,
        "messages": [{"role": "user", "content": "hi"}],
    },
    "anthropic.count_tokens": {
        "model": "claude-haiku-4-5-20251001",
        "messages": [{"role": "user", "content": "hi"}],
    },
    "openai.chat": {"model": "gpt-4.1", "messages": [{"role": "user", "content": "hi"}]},
    "anthropic.chat": {
        "model": "claude-sonnet-4-6",
        "messages": [{"role": "user", "content": "hi"}],
    },
    "openai.responses": {"model": "gpt-4.1", "input": "hi"},
    "openai.embeddings": {"model": "text-embedding-3-small", "input": "hi"},
    "cohere.rerank": {"model": "rerank-v3.5", "query": "q", "documents": ["a"]},
    "voyage.rerank": {"model": "rerank-2", "query": "q", "documents": ["a"]},
}


def test_every_post_route_has_checks() -> None:
    assert {r.name for r in ROUTES if r.method == "POST"} == set(CHECKS)


@pytest.mark.parametrize("route", CHECKS)
def test_a_good_body_passes_and_a_wrong_model_type_is_refused(route: str) -> None:
    check_body(route, GOOD[route])
    with pytest.raises(VendorRequestError) as e:
        check_body(route, {**GOOD[route], "model": ["x"]})
    assert e.value.status == 400


def test_per_model_rules_are_left_to_the_live_rewrite() -> None:
    # A reasoning model refuses temperature 0.7, but live mode's pins may remove it first.
    check_body("openai.chat", {**GOOD["openai.chat"], "model": "gpt-5", "temperature": 0.7})
    thinking = {"type": "enabled", "budget_tokens": 2048}
    check_body("anthropic.messages", {**GOOD["anthropic.messages"], "thinking": thinking})
    with pytest.raises(VendorRequestError):
        check_body("openai.chat", {**GOOD["openai.chat"], "temperature": "warm"})


def test_a_route_without_checks_accepts_any_body() -> None:
    check_body("openai.models", {"anything": [1]})


ROUTE_PATHS = {
    "anthropic.messages": ("anthropic", "/v1/messages"),
    "anthropic.count_tokens": ("anthropic", "/v1/messages/count_tokens"),
    "openai.chat": ("openai", "/v1/chat/completions"),
    "openai.responses": ("openai", "/v1/responses"),
    "openai.embeddings": ("openai", "/v1/embeddings"),
    "cohere.rerank": ("cohere", "/v2/rerank"),
    "voyage.rerank": ("voyage", "/v1/rerank"),
}
# Field names the checks and stubs read, at the top level, in a message, a block or a tool.
FIELDS = [
    "model", "max_tokens", "messages", "system", "tools", "tool_choice", "thinking",
    "output_config", "stop_sequences", "stream", "temperature", "top_p", "top_k", "metadata",
    "response_format", "text", "input", "instructions", "reasoning", "include", "n",
    "stream_options", "logprobs", "top_logprobs", "dimensions", "encoding_format", "query",
    "documents", "top_n", "return_documents", "cache_control", "service_tier", "speed",
    "max_completion_tokens", "max_output_tokens", "seed", "stop", "role", "content", "type",
    "name", "input_schema", "source", "function", "parameters",
]  # fmt: skip
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**20), 10**20)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(FIELDS), inner, max_size=4)
    ),
    max_leaves=10,
)


def _place(body: dict[str, Any], where: str, field: str, value: Any) -> None:
    if where == "top" or "messages" not in body:
        body[field] = value
    elif where == "message":
        body["messages"][0][field] = value
    elif where == "block":
        body["messages"][0]["content"] = [{"type": "text", "text": "x", field: value}]
    else:
        body["tools"] = [{"type": "function", "name": "f", "function": {"name": "f"}, field: value}]


@settings(max_examples=300, deadline=None)
@given(
    route=st.sampled_from(list(ROUTE_PATHS)),
    where=st.sampled_from(["top", "message", "block", "tool"]),
    field=st.sampled_from(FIELDS),
    value=json_values,
)
def test_any_field_value_is_answered_or_refused_never_a_crash(
    route: str, where: str, field: str, value: Any
) -> None:
    """A stub that raised anything but the vendor's refusal would be a 500 for the arm's fault."""
    body = json.loads(json.dumps(GOOD[route]))
    _place(body, where, field, value)
    vendor, path = ROUTE_PATHS[route]
    found = find_route(vendor, "POST", path)  # type: ignore[arg-type]
    assert found is not None
    try:
        check_body(route, body)
        reply = stub_handler(found)(
            StubRequest(vendor=found.vendor, route=route, body=body, digest=bytes(32)),
            StubContext(),
        )
    except VendorRequestError as e:
        assert e.status == 400
    else:
        assert reply.status == 200
