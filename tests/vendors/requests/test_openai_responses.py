"""vendors.requests.openai_responses: a Responses body read into parameters, or OpenAI's 400."""

from __future__ import annotations

from typing import Any

from tests.vendors.requests.test_openai_chat import refused as refused_by
from vendors.errors import VendorRequestError
from vendors.requests.openai_responses import parse_responses


def refused(body: dict[str, Any]) -> VendorRequestError:
    return refused_by(body, parse_responses)


def test_a_plain_body_gives_the_defaults() -> None:
    params = parse_responses({"model": "gpt-4o-mini", "input": "hello"})
    assert params.text_format == {"type": "text"} and params.top_logprobs is None
    assert not params.stream and params.functions == []


def test_logprobs_only_when_included_and_a_named_function() -> None:
    tool = {"type": "function", "name": "f", "parameters": {"type": "object"}}
    params = parse_responses(
        {
            "model": "m",
            "input": "hi",
            "include": ["message.output_text.logprobs"],
            "top_logprobs": 2,
            "tools": [tool, {"type": "web_search"}],
            "tool_choice": {"type": "function", "name": "f"},
        }
    )
    assert params.top_logprobs == 2 and params.named_function == "f"
    assert [f.name for f in params.functions] == ["f"]


def test_the_vendors_refusals() -> None:
    assert refused({"model": "m"}).param == "input"
    assert refused({"model": "m", "input": [{"role": "robot"}]}).param == "input[0].role"
    assert refused({"model": "m", "input": "hi", "reasoning": "high"}).param == "reasoning"
    assert refused({"model": "m", "input": "hi", "include": "x"}).param == "include"
    json_object = {"model": "m", "input": "hi", "text": {"format": {"type": "json_object"}}}
    assert refused(json_object).param == "input"
    nameless = {"model": "m", "input": "hi", "text": {"format": {"type": "json_schema"}}}
    assert refused(nameless).param == "text.format.name"
