"""vendors.requests.anthropic_compat: the body Anthropic's OpenAI-compatibility layer answers."""

from __future__ import annotations

import pytest

from vendors.errors import VendorRequestError
from vendors.requests.anthropic_compat import compat_body, hoist_system

MODEL = "claude-sonnet-4-6"


def test_system_and_developer_messages_join_with_one_newline_at_the_start() -> None:
    messages = [
        {"role": "user", "content": "u1"},
        {"role": "system", "content": "first"},
        {"role": "assistant", "content": "a1"},
        {"role": "developer", "content": [{"type": "text", "text": "second"}]},
        {"role": "user", "content": "u2"},
    ]
    assert hoist_system(messages) == [
        {"role": "system", "content": "first\nsecond"},
        {"role": "user", "content": "u1"},
        {"role": "assistant", "content": "a1"},
        {"role": "user", "content": "u2"},
    ]
    assert hoist_system([{"role": "user", "content": "u"}]) == [{"role": "user", "content": "u"}]


def test_ignored_fields_are_dropped_and_temperature_capped_at_one() -> None:
    body = {
        "model": MODEL,
        "messages": [{"role": "user", "content": "hi"}],
        "temperature": 1.7,
        "seed": 3,
        "logprobs": True,
        "reasoning_effort": "high",
        "response_format": {"type": "json_object"},
        "thinking": {"type": "adaptive"},
        "output_config": {"effort": "low"},
    }
    out = compat_body(body)
    assert out == {"model": MODEL, "messages": body["messages"], "temperature": 1}


@pytest.mark.parametrize(
    "extra",
    [
        {"n": 2},
        {"thinking": {"type": "enabled", "budget_tokens": 100}},
        {"thinking": {"type": "on"}},
        {"output_config": {"effort": "huge"}},
        {"output_config": "high"},
        {"max_tokens": 1500, "thinking": {"type": "enabled", "budget_tokens": 2000}},
    ],
)
def test_bad_anthropic_fields_are_refused(extra: dict[str, object]) -> None:
    body = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}], **extra}
    with pytest.raises(VendorRequestError) as e:
        compat_body(body)
    assert e.value.status == 400
