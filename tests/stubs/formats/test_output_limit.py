"""max_tokens honoured by the text stubs: a cut reply is exactly N tokens, its usage says N, and
its logprobs cover the same tokens (graphiti's reranker asks for one token with logprobs)."""

from __future__ import annotations

import anthropic
import httpx2
import openai
import pytest

from stubs.openai.common import split_tokens
from stubs.rules.replies import ReplyBook
from tests.stubs.sdk_transport import StubTransport

# graphiti-core 0.31's OpenAIRerankerClient, as it calls chat completions.
RERANK = [
    {
        "role": "system",
        "content": "You are an expert tasked with determining whether the passage is relevant to "
        "the query",
    },
    {
        "role": "user",
        "content": 'Respond with "True" if PASSAGE is relevant to QUERY and "False" otherwise.\n'
        "<PASSAGE>\nAna lives in Lisbon.\n</PASSAGE>\n<QUERY>\nWhere does Ana live?\n</QUERY>",
    },
]
LONG = [
    {
        "role": "user",
        "content": "Tell me everything you know about the old harbor at dawn, when the fishing "
        "boats come back in and the gulls follow them.",
    }
]


def client() -> openai.OpenAI:
    return openai.OpenAI(
        api_key="x",
        base_url="http://stub/v1",
        http_client=httpx2.Client(transport=StubTransport("openai")),
        max_retries=0,
    )


def test_the_rerankers_one_token_is_one_token_with_matching_logprobs() -> None:
    reply = client().chat.completions.create(
        model="gpt-4.1-nano",
        messages=RERANK,  # type: ignore[arg-type]
        temperature=0,
        max_tokens=1,
        logprobs=True,
        top_logprobs=2,
    )
    choice = reply.choices[0]
    assert choice.message.content == "True"
    assert choice.logprobs is not None and choice.logprobs.content is not None
    [entry] = choice.logprobs.content
    assert entry.token == "True"
    assert [t.token for t in entry.top_logprobs] == ["True", "False"]
    assert reply.usage is not None and reply.usage.completion_tokens == 1


def whole_replies() -> list[str]:
    """Every reply the default book may give LONG (the digest picks one per request)."""
    words = " ".join(LONG[0]["content"].split()[:12])
    options = ReplyBook.default().stubs.replies["main"]
    return [o.replace("$user_first_words", words) for o in options]


@pytest.mark.parametrize("limit", [1, 2, 5])
@pytest.mark.parametrize("field", ["max_tokens", "max_completion_tokens"])
def test_a_chat_reply_is_cut_at_the_limit(field: str, limit: int) -> None:
    reply = client().chat.completions.create(
        model="gpt-4.1",
        messages=LONG,  # type: ignore[arg-type]
        logprobs=True,
        **{field: limit},  # type: ignore[arg-type]
    )
    choice = reply.choices[0]
    text = choice.message.content or ""
    # The first `limit` tokens of a whole reply, as a model that stops there.
    assert any(text == "".join(split_tokens(w)[:limit]) for w in whole_replies())
    assert choice.finish_reason == "length"
    assert choice.logprobs is not None and choice.logprobs.content is not None
    assert "".join(e.token for e in choice.logprobs.content) == text
    assert reply.usage is not None and reply.usage.completion_tokens == limit


def test_a_streamed_chat_reply_is_cut_the_same_way() -> None:
    plain = client().chat.completions.create(model="gpt-4.1", messages=LONG, max_tokens=3)  # type: ignore[arg-type]
    stream = client().chat.completions.create(
        model="gpt-4.1",
        messages=LONG,  # type: ignore[arg-type]
        max_tokens=3,
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == plain.choices[0].message.content
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "length"
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == 3


def test_a_responses_reply_past_max_output_tokens_is_incomplete() -> None:
    roomy = client().responses.create(
        model="gpt-4.1", input=LONG[0]["content"], max_output_tokens=64
    )
    assert roomy.status == "completed"
    cut = client().responses.create(
        model="gpt-4.1",
        input=LONG[0]["content"],
        max_output_tokens=16,
        include=["message.output_text.logprobs"],
    )
    assert cut.status == "incomplete"
    assert cut.incomplete_details is not None
    assert cut.incomplete_details.reason == "max_output_tokens"
    assert any(cut.output_text == "".join(split_tokens(w)[:16]) for w in whole_replies())
    assert cut.usage is not None and cut.usage.output_tokens == 16
    logprobs = cut.output[0].content[0].logprobs  # type: ignore[union-attr]
    assert logprobs is not None and "".join(lp.token for lp in logprobs) == cut.output_text


def test_a_streamed_responses_reply_ends_with_response_incomplete() -> None:
    with client().responses.stream(
        model="gpt-4.1", input=LONG[0]["content"], max_output_tokens=16
    ) as stream:
        kinds = [event.type for event in stream]
    assert kinds[-1] == "response.incomplete"


def test_anthropic_max_tokens_one_bills_one_token() -> None:
    transport = StubTransport("anthropic")
    message = anthropic.Anthropic(
        api_key="x", base_url="http://stub", http_client=httpx2.Client(transport=transport)
    ).messages.create(model="claude-sonnet-4-6", max_tokens=1, messages=LONG)  # type: ignore[arg-type]
    assert message.stop_reason == "max_tokens"
    assert message.usage.output_tokens == 1


def test_both_chat_limit_fields_are_the_vendors_400() -> None:
    """OpenAI refuses max_tokens with max_completion_tokens (issue 36 item 7): so does record
    mode, with the vendor's message, param and code, before a paid run would meet it."""
    with pytest.raises(openai.BadRequestError) as refused:
        client().chat.completions.create(
            model="gpt-4.1", messages=LONG, max_tokens=5, max_completion_tokens=5
        )  # type: ignore[call-overload]
    error = refused.value.body
    assert isinstance(error, dict)
    assert error["param"] == "max_tokens" and error["code"] == "invalid_parameter_combination"
    assert "at the same time is not supported" in error["message"]
