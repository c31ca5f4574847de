"""Two fresh proxy processes fed the same script answer byte for byte alike."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.proxy.proxy_process import ProxyProcess

pytestmark = pytest.mark.integration

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "when": {"type": "string", "format": "date-time"},
    },
    "required": ["name", "tags", "when"],
    "additionalProperties": False,
}
CHAT = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "What did I say about Lisbon?"},
]
SCRIPT: list[tuple[str, dict[str, Any]]] = [
    (
        "/anthropic/v1/messages",
        {
            "model": "claude-haiku-4-5-20251001",
            "max_tokens": 300,
            "messages": CHAT[1:],
            "system": "Be kind.",
        },
    ),
    (
        "/anthropic/v1/messages",
        {
            "model": "claude-haiku-4-5-20251001",
            "max_tokens": 300,
            "messages": CHAT[1:],
            "stream": True,
        },
    ),
    (
        "/anthropic/v1/messages",
        {
            "model": "claude-haiku-4-5-20251001",
            "max_tokens": 300,
            "messages": CHAT[1:],
            "tools": [{"name": "save", "input_schema": SCHEMA}],
            "tool_choice": {"type": "any"},
        },
    ),
    (
        "/openai/v1/chat/completions",
        {"model": "gpt-4.1", "messages": CHAT, "n": 2, "logprobs": True, "top_logprobs": 3},
    ),
    (
        "/openai/v1/chat/completions",
        {
            "model": "gpt-4.1",
            "messages": CHAT,
            "stream": True,
            "stream_options": {"include_usage": True},
        },
    ),
    (
        "/openai/v1/chat/completions",
        {
            "model": "gpt-4.1",
            "messages": CHAT,
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "x", "schema": SCHEMA, "strict": True},
            },
        },
    ),
    ("/openai/v1/responses", {"model": "gpt-5", "input": "hello", "stream": True}),
    ("/openai/v1/embeddings", {"model": "text-embedding-3-small", "input": ["a", "b c"]}),
    ("/cohere/v2/rerank", {"model": "rerank-v3.5", "query": "q", "documents": ["q a", "b"]}),
]


def _play(proxy: ProxyProcess) -> list[bytes]:
    bodies = []
    with httpx.Client(timeout=30) as client:
        for path, body in SCRIPT:
            response = client.post(
                proxy.base + path, json=body, headers={"anthropic-version": "2023-06-01"}
            )
            assert response.status_code == 200, response.text
            bodies.append(response.content)
    return bodies


def test_two_fresh_processes_give_identical_bytes_and_hashes(tmp_path: Path) -> None:
    results = []
    for name in ("first", "second"):
        proxy = ProxyProcess(tmp_path / name)
        try:
            bodies = _play(proxy)
            calls = proxy.calls(at_least=len(SCRIPT))
        finally:
            proxy.stop()
        results.append((bodies, calls))
    (bodies_a, calls_a), (bodies_b, calls_b) = results
    assert bodies_a == bodies_b
    assert [c["request_hash"] for c in calls_a] == [c["request_hash"] for c in calls_b]
    assert [c["response_hash"] for c in calls_a] == [c["response_hash"] for c in calls_b]
    assert len({c["request_hash"] for c in calls_a}) == len(SCRIPT)


def test_masked_fields_do_not_change_hash_or_reply(fresh_proxy: ProxyProcess) -> None:
    path, body = SCRIPT[3]
    with httpx.Client(timeout=30) as client:
        a = client.post(fresh_proxy.base + path, json={**body, "user": "session-1234"})
        b = client.post(fresh_proxy.base + path, json={**body, "user": "session-9876"})
        client.post(fresh_proxy.base + path, json={**body, "temperature": 0.5})
    assert a.content == b.content
    first, second, third = fresh_proxy.calls(at_least=3)
    assert first["request_hash"] == second["request_hash"] != third["request_hash"]
