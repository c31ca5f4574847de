"""vendors.hosts: which vendor a request is for, and the path it asks for."""

from __future__ import annotations

import pytest

from vendors.hosts import split_vendor


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/anthropic/v1/messages", ("anthropic", "/v1/messages")),
        # The AI SDK's @ai-sdk/anthropic form: its base URL is expected to end in /v1.
        ("/anthropic/messages", ("anthropic", "/v1/messages")),
        ("/anthropic/messages/count_tokens", ("anthropic", "/v1/messages/count_tokens")),
        ("/anthropic/models?limit=5", ("anthropic", "/v1/models")),
        # Only the routes Anthropic has: anything else keeps its path (and gets a 404).
        ("/anthropic/chat/completions", ("anthropic", "/chat/completions")),
        ("/anthropic", ("anthropic", "/")),
        ("/openai/v1/chat/completions", ("openai", "/v1/chat/completions")),
        # No alias for the other vendors: their base URLs carry /v1 already.
        ("/openai/chat/completions", ("openai", "/chat/completions")),
    ],
)
def test_the_vendor_prefix_names_the_vendor_and_is_taken_off(
    path: str, expected: tuple[str, str]
) -> None:
    assert split_vendor(path, "127.0.0.1:8080", {}) == expected


def test_without_a_prefix_the_host_or_the_headers_name_the_vendor() -> None:
    assert split_vendor("/v1/messages", "api.anthropic.com", {}) == ("anthropic", "/v1/messages")
    assert split_vendor("/v1/messages", "proxy:1", {"anthropic-version": "x"})[0] == "anthropic"
    assert split_vendor("/v2/rerank", "proxy:1", {}) == ("cohere", "/v2/rerank")
    assert split_vendor("/v1/embeddings", "proxy:1", {}) == ("openai", "/v1/embeddings")
