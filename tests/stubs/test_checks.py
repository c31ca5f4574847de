"""stubs.checks: every route that takes a body has its checks, and each one refuses a body of
the wrong shape with the vendor's 400 (proxy.intake runs them in both modes)."""

from __future__ import annotations

from typing import Any

import pytest

from stubs.checks import CHECKS, check_body
from stubs.errors import StubRequestError
from stubs.routes import ROUTES

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
    with pytest.raises(StubRequestError) as e:
        check_body(route, {**GOOD[route], "model": ["x"]})
    assert e.value.status == 400


def test_per_model_rules_are_left_to_the_live_rewrite() -> None:
    # A reasoning model refuses temperature 0.7, but live mode's pins may remove it first.
    check_body("openai.chat", {**GOOD["openai.chat"], "model": "gpt-5", "temperature": 0.7})
    thinking = {"type": "enabled", "budget_tokens": 2048}
    check_body("anthropic.messages", {**GOOD["anthropic.messages"], "thinking": thinking})
    with pytest.raises(StubRequestError):
        check_body("openai.chat", {**GOOD["openai.chat"], "temperature": "warm"})


def test_a_route_without_checks_accepts_any_body() -> None:
    check_body("openai.models", {"anything": [1]})
