"""proxy.metering.tokencount: the right vocabulary per model, exact counts for OpenAI models, a
rounded-up
safety margin for Claude and unknown models, and a request count that covers all prompt text."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest
import quicktok
from hypothesis import given, settings
from hypothesis import strategies as st

from proxy.metering import tokencount
from proxy.metering.tokencount import (
    CLAUDE_SAFETY_MARGIN,
    MEDIA_ALLOWANCE,
    count_request_input,
    count_tokens,
    encoding_for,
)

# Token ids tiktoken gives for "hello world" (o200k_base, cl100k_base): the bundled vocabularies
# are the real ones.
HELLO_O200K = [24912, 2375]
HELLO_CL100K = [15339, 1917]
# Text on which the two vocabularies disagree, so a wrong mapping shows up.
MIXED = "Übermäßig große Straßenbahnhaltestellen 東京都庁 こんにちは、世界 " * 5


def o200k(text: str) -> int:
    return len(quicktok.get_encoding("o200k_base").encode_ordinary(text))


def cl100k(text: str) -> int:
    return len(quicktok.get_encoding("cl100k_base").encode_ordinary(text))


def test_bundled_vocabularies_are_tiktokens() -> None:
    assert quicktok.get_encoding("o200k_base").encode_ordinary("hello world") == HELLO_O200K
    assert quicktok.get_encoding("cl100k_base").encode_ordinary("hello world") == HELLO_CL100K
    assert o200k(MIXED) != cl100k(MIXED)


@pytest.mark.parametrize(
    "model",
    [
        "gpt-4o",
        "gpt-4o-mini-2024-07-18",
        "chatgpt-4o-latest",
        "gpt-4.1",
        "gpt-4.1-mini",
        "gpt-5",
        "gpt-5-mini",
        "o1",
        "o3-mini",
        "o4-mini",
        "openai/gpt-4o",
        "ft:gpt-4o-mini:acme::abc123",
        "GPT-4O",
    ],
)
def test_current_openai_models_count_with_o200k(model: str) -> None:
    assert encoding_for(model) == "o200k_base"
    assert count_tokens(model, MIXED) == o200k(MIXED)


@pytest.mark.parametrize(
    "model",
    [
        "gpt-4",
        "gpt-4-0613",
        "gpt-4-turbo",
        "gpt-3.5-turbo",
        "text-embedding-3-small",
        "text-embedding-3-large",
        "text-embedding-ada-002",
    ],
)
def test_older_openai_models_count_with_cl100k(model: str) -> None:
    assert encoding_for(model) == "cl100k_base"
    assert count_tokens(model, MIXED) == cl100k(MIXED)


@pytest.mark.parametrize(
    "model", ["claude-haiku-4-5-20251001", "claude-sonnet-4-6", "claude-opus-4-1", "mystery-7b", ""]
)
def test_claude_and_unknown_models_get_the_margin_rounded_up(model: str) -> None:
    assert encoding_for(model) is None
    raw = o200k(MIXED)
    expected = -(-raw * 135 // 100)
    assert count_tokens(model, MIXED) == expected
    assert count_tokens(model, MIXED) >= raw * Fraction(135, 100)


def test_margin_rounding_is_exact_integer_arithmetic() -> None:
    # 20 * 1.35 is 27.000000000000004 in floats: a float ceil would say 28.
    assert Fraction(27, 20) == CLAUDE_SAFETY_MARGIN
    text = "hello world" * 10
    raw = o200k(text)
    words = next(t for t in (" ".join(["word"] * n) for n in range(1, 60)) if o200k(t) == 20)
    assert count_tokens("claude-sonnet-4-6", words) == 27
    assert count_tokens("claude-sonnet-4-6", text) == -(-raw * 27 // 20)


def test_empty_text_is_zero_and_special_token_text_is_ordinary() -> None:
    assert count_tokens("gpt-4o", "") == 0
    assert count_tokens("claude-sonnet-4-6", "") == 0
    # An arm may send text that spells a special token; the vendor bills it as text.
    assert count_tokens("gpt-4o", "a <|endoftext|> b") == o200k("a <|endoftext|> b") > 3


@settings(max_examples=50, deadline=None)
@given(st.text(max_size=300))
def test_counts_are_deterministic_and_the_margin_never_counts_less(text: str) -> None:
    assert count_tokens("gpt-4o", text) == count_tokens("gpt-4o", text)
    assert count_tokens("claude-sonnet-4-6", text) >= count_tokens("gpt-4o", text)


def test_vocabularies_are_loaded_once() -> None:
    tokencount.preload()
    assert tokencount._encoding("o200k_base") is tokencount._encoding("o200k_base")


# -- request input -----------------------------------------------------------------------------

TOOL = {
    "name": "get_weather",
    "description": "Current weather for a city",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
}


def test_request_count_covers_system_messages_and_tools() -> None:
    body = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 100,
        "system": [
            {"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}
        ],
        "messages": [
            {"role": "user", "content": "Where does Ana live?"},
            {"role": "assistant", "content": [{"type": "text", "text": "In Porto."}]},
            {"role": "user", "content": "And the weather there?"},
        ],
        "tools": [TOOL],
    }
    counted = count_request_input("anthropic.messages", "claude-sonnet-4-6", body)
    pieces = [
        "You are terse.",
        "Where does Ana live?",
        "In Porto.",
        "And the weather there?",
        json.dumps([TOOL]),
    ]
    assert counted >= sum(count_tokens("claude-sonnet-4-6", p) for p in pieces) - len(pieces)
    without_tools = count_request_input(
        "anthropic.messages", "claude-sonnet-4-6", {**body, "tools": []}
    )
    assert counted - without_tools >= o200k(json.dumps(TOOL)) // 2


def test_request_count_for_openai_chat_is_at_least_openais_own_formula() -> None:
    messages = [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Where does Ana live?"},
    ]
    body = {"model": "gpt-4o", "messages": messages}
    # OpenAI cookbook: 3 tokens per message, role and content, plus 3 priming the reply.
    cookbook = 3 + sum(3 + o200k(m["role"]) + o200k(m["content"]) for m in messages)
    assert count_request_input("openai.chat", "gpt-4o", body) >= cookbook


def test_media_counts_an_allowance_not_its_base64() -> None:
    image = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo" * 50_000},
    }
    body = {"messages": [{"role": "user", "content": [image, {"type": "text", "text": "What?"}]}]}
    counted = count_request_input("anthropic.messages", "claude-sonnet-4-6", body)
    assert MEDIA_ALLOWANCE <= counted < MEDIA_ALLOWANCE + 50


def test_embeddings_input_as_text_or_token_ids() -> None:
    text = count_request_input(
        "openai.embeddings", "text-embedding-3-small", {"input": ["hello world", "hello world"]}
    )
    assert text == cl100k("hello world\nhello world")
    ids = count_request_input(
        "openai.embeddings", "text-embedding-3-small", {"input": [[1, 2, 3], [4, 5]]}
    )
    assert ids == 5
