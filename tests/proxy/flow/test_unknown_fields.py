"""Unknown top-level fields (issue 21): every route refuses one with its vendor's own error, in
record mode and in live mode, before anything is reserved or forwarded, and logs it as a
`bad_request`; each SDK's own request with every parameter it documents is accepted.

The fields are sent as a user would send them: through the official SDKs' `extra_body`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest

from tests.fakevendor.server import FakeVendor
from tests.proxy.live_helpers import start_live_proxy
from tests.proxy.proxy_process import ProxyProcess
from tests.vendors.test_fields import sdk_fields

pytestmark = pytest.mark.integration

HAIKU = "claude-haiku-4-5-20251001"
USER = [{"role": "user", "content": "My sister lives in Lisbon."}]
BOGUS = {"bogus_field": 1}
ANTHROPIC_REFUSAL = "bogus_field: Extra inputs are not permitted"
CHAT_REFUSAL = "Unrecognized request argument supplied: bogus_field"


def _anthropic_messages(proxy: ProxyProcess) -> Any:
    return proxy.anthropic().messages.create(
        model=HAIKU,
        max_tokens=32,
        messages=USER,
        extra_body=BOGUS,  # type: ignore[arg-type]
    )


def _anthropic_count(proxy: ProxyProcess) -> Any:
    return proxy.anthropic().messages.count_tokens(
        model=HAIKU,
        messages=USER,
        extra_body=BOGUS,  # type: ignore[arg-type]
    )


def _chat(proxy: ProxyProcess) -> Any:
    return proxy.openai().chat.completions.create(
        model="gpt-4.1-mini",
        messages=USER,
        extra_body=BOGUS,  # type: ignore[arg-type]
    )


def _responses(proxy: ProxyProcess) -> Any:
    return proxy.openai().responses.create(model="gpt-4.1-mini", input="hi", extra_body=BOGUS)


def _embeddings(proxy: ProxyProcess) -> Any:
    return proxy.openai().embeddings.create(
        model="text-embedding-3-small", input="hi", extra_body=BOGUS
    )


# route -> (the SDK call with a bogus field, the typed error it must raise, words of its message)
SDK_CASES: dict[str, tuple[Callable[[ProxyProcess], Any], type[Exception], str]] = {
    "anthropic.messages": (_anthropic_messages, anthropic.BadRequestError, ANTHROPIC_REFUSAL),
    "anthropic.count_tokens": (_anthropic_count, anthropic.BadRequestError, ANTHROPIC_REFUSAL),
    "openai.chat": (_chat, openai.BadRequestError, CHAT_REFUSAL),
    "openai.responses": (_responses, openai.BadRequestError, "Unknown parameter: 'bogus_field'."),
    "openai.embeddings": (_embeddings, openai.BadRequestError, CHAT_REFUSAL),
}


@pytest.mark.parametrize("route", SDK_CASES)
def test_an_unknown_field_gets_the_vendors_refusal_through_the_sdk(
    record_proxy: ProxyProcess, route: str
) -> None:
    call, error, words = SDK_CASES[route]
    with pytest.raises(error) as raised:
        call(record_proxy)
    assert getattr(raised.value, "status_code", None) == 400
    assert words in str(raised.value)
    logged = record_proxy.call_where(route=route, status=400)
    assert logged["outcome"] == "bad_request"
    assert logged["model_requested"]  # the refused body's model is still in the log


@pytest.mark.parametrize(
    ("vendor", "path", "body", "status", "key", "words"),
    [
        (
            "cohere",
            "/cohere/v2/rerank",
            {"model": "rerank-v3.5", "query": "q", "documents": ["a"], "top_k": 1},
            422,
            "message",
            "unknown field: parameter 'top_k' is not a valid field",
        ),
        (
            "voyage",
            "/voyage/v1/rerank",
            {"model": "rerank-2", "query": "q", "documents": ["a"], "top_n": 1},
            400,
            "detail",
            "Argument 'top_n' is not supported by our API",
        ),
    ],
)
def test_a_rerank_with_the_other_vendors_field_is_refused_as_that_vendor_does(
    record_proxy: ProxyProcess,
    vendor: str,
    path: str,
    body: dict[str, Any],
    status: int,
    key: str,
    words: str,
) -> None:
    """Cohere's `top_n` and Voyage's `top_k` are the mix-up gateways make (no SDK of either is
    installed: the request is what their REST references show)."""
    reply = httpx.post(record_proxy.base + path, json=body, timeout=10)
    assert reply.status_code == status
    assert words in reply.json()[key]
    assert record_proxy.call_where(route=f"{vendor}.rerank", status=status)["outcome"] == (
        "bad_request"
    )
    good = {k: v for k, v in body.items() if k not in ("top_k", "top_n")}
    assert httpx.post(record_proxy.base + path, json=good, timeout=10).status_code == 200


TOOL = {
    "name": "get_weather",
    "description": "Weather for a city",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
}
FUNCTION = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}


def _covers(route: str, *calls: dict[str, Any]) -> None:
    """The calls below pass every parameter the installed SDK documents for `route` (so a new
    SDK parameter is sent here before an arm meets a refusal of it)."""
    assert sdk_fields(route) - {key for call in calls for key in call} == set()


def test_anthropic_messages_with_every_parameter_is_accepted(record_proxy: ProxyProcess) -> None:
    client = record_proxy.anthropic()
    plain: dict[str, Any] = {
        "model": HAIKU,
        "max_tokens": 2048,
        "messages": USER,
        "system": "Be brief.",
        "tools": [TOOL],
        "tool_choice": {"type": "auto"},
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "output_config": {"effort": "low"},
        "cache_control": {"type": "ephemeral"},
        "speed": "standard",
        "metadata": {"user_id": "user-1"},
        "stop_sequences": ["\n\nHuman:"],
        "service_tier": "auto",
        "container": None,
        "inference_geo": "us",
        "diagnostics": None,
        "user_profile_id": "profile-1",
        "workspace_id": "workspace-1",
    }
    assert client.messages.create(**plain).content
    with client.messages.stream(**plain) as stream:
        assert stream.get_final_message().content
    beta: dict[str, Any] = {
        "model": HAIKU,
        "max_tokens": 64,
        "messages": USER,
        "stream": False,
        "betas": ["context-management-2025-06-27", "mcp-client-2025-04-04"],
        "context_management": {"edits": [{"type": "clear_tool_uses_20250919"}]},
        "mcp_servers": [{"type": "url", "url": "https://mcp.example.com/sse", "name": "example"}],
        "billing_policy": None,
        "compaction": None,
        "fallbacks": None,
        "fallback_credit_token": None,
        "thread": None,
        # Fields the SDK no longer names but the API still reads (litellm sends output_format).
        "extra_body": {
            "temperature": 0.5,
            "top_k": 5,
            "output_format": {"type": "json_schema", "schema": {"type": "object"}},
        },
    }
    assert client.beta.messages.create(**beta).content
    _covers("anthropic.messages", plain, beta)
    count = {k: v for k, v in plain.items() if k in sdk_fields("anthropic.count_tokens")}
    assert client.messages.count_tokens(**count).input_tokens > 0
    beta_count = {k: beta[k] for k in ("context_management", "mcp_servers", "compaction")}
    beta_count |= {"billing_policy": None, "betas": beta["betas"]}
    assert client.beta.messages.count_tokens(**count, **beta_count).input_tokens > 0
    # output_format is the SDK's own (it sends a model's schema as output_config.format).
    _covers("anthropic.count_tokens", count, beta_count, {"output_format": None})


def test_openai_chat_with_every_parameter_is_accepted(record_proxy: ProxyProcess) -> None:
    client = record_proxy.openai()
    current: dict[str, Any] = {
        "model": "gpt-4.1-mini",
        "messages": USER,
        "audio": None,
        "frequency_penalty": 0.1,
        "logit_bias": {"50256": -100},
        "logprobs": True,
        "top_logprobs": 2,
        "max_completion_tokens": 64,
        "metadata": {"k": "v"},
        "modalities": ["text"],
        "moderation": None,
        "n": 1,
        "parallel_tool_calls": True,
        "prediction": {"type": "content", "content": "Lisbon"},
        "presence_penalty": 0.1,
        "prompt_cache_key": "cache-1",
        "prompt_cache_options": {},
        "prompt_cache_retention": "in_memory",
        "response_format": {"type": "text"},
        "safety_identifier": "user-1",
        "seed": 7,
        "service_tier": "auto",
        "stop": ["\n\n"],
        "store": False,
        "stream": False,
        "temperature": 0.2,
        "tool_choice": "auto",
        "tools": [FUNCTION],
        "top_p": 0.9,
        "user": "user-1",
        "verbosity": "low",
        "web_search_options": None,
    }
    assert client.chat.completions.create(**current).choices
    legacy: dict[str, Any] = {
        "model": "gpt-4.1-mini",
        "messages": USER,
        "functions": [FUNCTION["function"]],
        "function_call": "auto",
        "max_tokens": 32,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    assert list(client.chat.completions.create(**legacy))
    reasoning = {"model": "o4-mini", "messages": USER, "reasoning_effort": "low"}
    assert client.chat.completions.create(**reasoning).choices
    _covers("openai.chat", current, legacy, reasoning)


def test_openai_responses_and_embeddings_with_every_parameter_are_accepted(
    record_proxy: ProxyProcess,
) -> None:
    client = record_proxy.openai()
    responses: dict[str, Any] = {
        "model": "gpt-4.1-mini",
        "input": "My sister lives in Lisbon.",
        "access_programs": {},
        "background": False,
        "background_options": {},
        "context_management": None,
        "conversation": None,
        "image": {},
        "include": ["message.output_text.logprobs"],
        "instructions": "Be brief.",
        "max_output_tokens": 64,
        "max_tool_calls": 2,
        "metadata": {"k": "v"},
        "moderation": None,
        "parallel_tool_calls": True,
        "previous_response_id": None,
        "prompt": None,
        "prompt_cache_key": "cache-1",
        "prompt_cache_options": {},
        "prompt_cache_retention": "in_memory",
        "reasoning": None,
        "safety_identifier": "user-1",
        "service_tier": "auto",
        "store": False,
        "stream": False,
        "stream_options": None,
        "temperature": 0.2,
        "text": {"format": {"type": "text"}},
        "tool_choice": "auto",
        "tools": [{"type": "function", "name": "get_weather", "parameters": TOOL["input_schema"]}],
        "top_logprobs": 2,
        "top_p": 0.9,
        "truncation": "disabled",
        "user": "user-1",
    }
    assert client.responses.create(**responses).output
    _covers("openai.responses", responses)
    embeddings: dict[str, Any] = {
        "model": "text-embedding-3-small",
        "input": ["hi"],
        "dimensions": 64,
        "encoding_format": "float",
        "user": "user-1",
    }
    assert len(client.embeddings.create(**embeddings).data[0].embedding) == 64
    _covers("openai.embeddings", embeddings)


def test_live_mode_refuses_an_unknown_field_before_reserving_or_forwarding(
    tmp_path: Path, vendor: FakeVendor
) -> None:
    vendor.reset()
    proxy = start_live_proxy(tmp_path, vendor)
    try:
        for route, (call, error, words) in SDK_CASES.items():
            with pytest.raises(error) as raised:
                call(proxy)
            assert words in str(raised.value), route
            refused = proxy.call_where(route=route, status=400)
            assert refused["outcome"] == "bad_request"
            assert refused["mode"] == "live", route  # the proxy's mode, though nothing went out
        # Nothing went out and nothing was reserved: the refusal cost nothing.
        assert vendor.requests == []
        journal = proxy.run_dir / "reservations.jsonl"
        assert not journal.exists() or not journal.read_text().strip()
        # The same request without the field goes out.
        proxy.openai().chat.completions.create(model="gpt-4.1-mini", messages=USER)  # type: ignore[arg-type]
        assert len(vendor.wait_for_requests(1)) == 1
    finally:
        proxy.stop()
