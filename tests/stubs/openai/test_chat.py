"""POST /v1/chat/completions stub, driven through the real openai SDK (sync and async)."""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator, Iterator
from typing import Any, Literal

import httpx2
import jsonschema
import openai
import pydantic
import pytest
from openai.types.chat import (
    ChatCompletion,
    ChatCompletionChunk,
    ChatCompletionMessageParam,
    ChatCompletionNamedToolChoiceParam,
    ChatCompletionToolUnionParam,
)

from stubs.openai.chat import chat_completions
from stubs.request import StubRequest
from stubs.rules.context import StubContext
from stubs.rules.replies import ReplyBook, StubsFile
from tests.stubs.sdk_transport import StubTransport, body_digest
from vendors.errors import VendorRequestError

USER: list[ChatCompletionMessageParam] = [
    {"role": "user", "content": "Tell me about the harbor at dawn, please."}
]

WEATHER_PARAMS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "minLength": 1},
        "unit": {"type": "string", "enum": ["c", "f"]},
        "days": {"type": "integer", "minimum": 1, "maximum": 7},
    },
    "required": ["city", "unit", "days"],
    "additionalProperties": False,
}
TOOLS: list[ChatCompletionToolUnionParam] = [
    {"type": "function", "function": {"name": "get_weather", "parameters": WEATHER_PARAMS}},
    {"type": "function", "function": {"name": "noop", "description": "does nothing"}},
]


class Person(pydantic.BaseModel):
    name: str
    age: int
    role: Literal["admin", "user"]
    tags: list[str]


def book_with(replies: list[str]) -> StubContext:
    return StubContext(book=ReplyBook(StubsFile.model_validate({"replies": {"main": replies}})))


def call(body: dict[str, Any], ctx: StubContext | None = None) -> Any:
    req = StubRequest("openai", "openai.chat", body, body_digest(body))
    return chat_completions(req, ctx or StubContext())


def sse_payloads(chunks: list[bytes]) -> list[str]:
    out = []
    for chunk in chunks:
        assert chunk.startswith(b"data: ") and chunk.endswith(b"\n\n")
        out.append(chunk[len(b"data: ") : -2].decode())
    return out


@pytest.fixture
def transport() -> StubTransport:
    return StubTransport("openai")


@pytest.fixture
def client(transport: StubTransport) -> Iterator[openai.OpenAI]:
    http = httpx2.Client(transport=transport)
    with openai.OpenAI(
        api_key="x", base_url="http://stub/v1", http_client=http, max_retries=0
    ) as c:
        yield c


@pytest.fixture
async def aclient(transport: StubTransport) -> AsyncIterator[openai.AsyncOpenAI]:
    http = httpx2.AsyncClient(transport=transport)
    async with openai.AsyncOpenAI(
        api_key="x", base_url="http://stub/v1", http_client=http, max_retries=0
    ) as c:
        yield c


def test_plain_reply_is_a_chat_completion_with_consistent_usage(
    client: openai.OpenAI, transport: StubTransport
) -> None:
    completion = client.chat.completions.create(model="gpt-4o", messages=USER)
    # Strict validation of the raw body, beyond the SDK's lenient construct.
    strict = ChatCompletion.model_validate_json(transport.replies[-1].body, strict=True)
    assert strict == completion
    assert completion.id.startswith("chatcmpl-")
    assert completion.object == "chat.completion"
    assert completion.created == 1735689600
    assert completion.model == "gpt-4o"
    choice = completion.choices[0]
    assert choice.finish_reason == "stop"
    assert choice.message.role == "assistant"
    assert choice.message.content and "harbor at dawn" in choice.message.content
    usage = completion.usage
    assert usage is not None and usage.prompt_tokens_details and usage.completion_tokens_details
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    assert usage.prompt_tokens_details.cached_tokens == 0
    assert usage.completion_tokens_details.reasoning_tokens == 0
    harness = transport.replies[-1].usage
    assert harness.input_tokens == usage.prompt_tokens  # nothing cached to subtract
    assert harness.output_tokens == usage.completion_tokens
    assert harness.reasoning_tokens == 0


def test_reasoning_model_reports_reasoning_inside_completion_tokens(
    client: openai.OpenAI, transport: StubTransport
) -> None:
    completion = client.chat.completions.create(
        model="o3-mini", messages=USER, reasoning_effort="high"
    )
    usage = completion.usage
    assert usage is not None and usage.completion_tokens_details is not None
    reasoning = usage.completion_tokens_details.reasoning_tokens
    assert reasoning is not None and 0 < reasoning < usage.completion_tokens
    harness = transport.replies[-1].usage
    assert harness.reasoning_tokens == reasoning
    assert harness.output_tokens == usage.completion_tokens  # billed total, not added twice


def test_stream_without_include_usage_has_no_usage_and_same_text(
    client: openai.OpenAI, transport: StubTransport
) -> None:
    plain = client.chat.completions.create(model="gpt-4o", messages=USER)
    chunks = list(client.chat.completions.create(model="gpt-4o", messages=USER, stream=True))
    reply = transport.replies[-1]
    assert reply.stream and reply.content_type == "text/event-stream"
    payloads = sse_payloads(reply.chunks)
    assert payloads[-1] == "[DONE]"
    assert all('"usage"' not in p for p in payloads)
    assert all(c.choices and c.usage is None for c in chunks)
    for raw in payloads[:-1]:
        ChatCompletionChunk.model_validate_json(raw, strict=True)
    assert chunks[0].choices[0].delta.role == "assistant"
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert len(chunks) > 3  # a few words per delta, not one blob
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert text == plain.choices[0].message.content
    assert {c.id for c in chunks} == {plain.id}


def test_stream_with_include_usage_adds_one_choiceless_usage_chunk(
    client: openai.OpenAI,
) -> None:
    plain = client.chat.completions.create(model="o4-mini", messages=USER)
    chunks = list(
        client.chat.completions.create(
            model="o4-mini",
            messages=USER,
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    *content_chunks, last = chunks
    assert last.choices == []
    assert last.usage == plain.usage
    assert all(c.choices and c.usage is None for c in content_chunks)


def test_stream_helper_final_completion_matches_plain(client: openai.OpenAI) -> None:
    plain = client.chat.completions.create(model="gpt-4o-mini", messages=USER)
    with client.chat.completions.stream(
        model="gpt-4o-mini", messages=USER, stream_options={"include_usage": True}
    ) as stream:
        deltas = [e.delta for e in stream if e.type == "content.delta"]
        final = stream.get_final_completion()
    assert "".join(deltas) == plain.choices[0].message.content
    assert final.choices[0].message.content == plain.choices[0].message.content
    assert final.usage == plain.usage


async def test_async_plain_and_stream(aclient: openai.AsyncOpenAI) -> None:
    plain = await aclient.chat.completions.create(model="gpt-4o", messages=USER)
    stream = await aclient.chat.completions.create(model="gpt-4o", messages=USER, stream=True)
    text = "".join([c.choices[0].delta.content or "" async for c in stream])
    assert plain.choices[0].message.content and text == plain.choices[0].message.content


def test_parse_with_pydantic_model(client: openai.OpenAI) -> None:
    completion = client.chat.completions.parse(
        model="gpt-4o", messages=USER, response_format=Person
    )
    parsed = completion.choices[0].message.parsed
    assert isinstance(parsed, Person)
    assert parsed.role in ("admin", "user")


async def test_async_parse_and_stream_parse(aclient: openai.AsyncOpenAI) -> None:
    completion = await aclient.chat.completions.parse(
        model="gpt-5", messages=USER, response_format=Person
    )
    assert isinstance(completion.choices[0].message.parsed, Person)
    async with aclient.chat.completions.stream(
        model="gpt-5", messages=USER, response_format=Person
    ) as stream:
        final = await stream.get_final_completion()
    assert final.choices[0].message.parsed == completion.choices[0].message.parsed


def test_json_object_uses_book_json_or_wraps_plain_text(client: openai.OpenAI) -> None:
    mem0_like: list[ChatCompletionMessageParam] = [
        {"role": "system", "content": "You are a Personal Information Organizer. Reply in JSON."},
        {"role": "user", "content": 'I live in "Lyon" now'},
    ]
    completion = client.chat.completions.create(
        model="gpt-4o-mini",
        messages=mem0_like,
        response_format={"type": "json_object"},
    )
    assert json.loads(completion.choices[0].message.content or "") == {
        "facts": ['I live in "Lyon" now']
    }
    plain: list[ChatCompletionMessageParam] = [
        {"role": "user", "content": "Answer in json: where do I live?"}
    ]
    completion = client.chat.completions.create(
        model="gpt-4o-mini",
        messages=plain,
        response_format={"type": "json_object"},
    )
    wrapped = json.loads(completion.choices[0].message.content or "")
    assert isinstance(wrapped, dict) and "where do I live?" in wrapped["response"]


def test_json_object_without_the_word_json_is_refused(client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as e:
        client.chat.completions.create(
            model="gpt-4o-mini",
            messages=USER,
            response_format={"type": "json_object"},
        )
    assert e.value.param == "messages"


@pytest.mark.parametrize(
    "tool_choice",
    ["required", {"type": "function", "function": {"name": "get_weather"}}],
)
def test_forced_tool_call_arguments_validate(client: openai.OpenAI, tool_choice: Any) -> None:
    completion = client.chat.completions.create(
        model="gpt-4o", messages=USER, tools=TOOLS, tool_choice=tool_choice
    )
    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content is None
    calls = choice.message.tool_calls or []
    assert len(calls) == 1
    call_ = calls[0]
    assert call_.type == "function" and call_.id.startswith("call_")
    schemas = {"get_weather": WEATHER_PARAMS, "noop": {"type": "object"}}
    jsonschema.validate(json.loads(call_.function.arguments), schemas[call_.function.name])
    if isinstance(tool_choice, dict):
        assert call_.function.name == "get_weather"


def test_forced_tool_call_streams_arguments_in_pieces(client: openai.OpenAI) -> None:
    choice: ChatCompletionNamedToolChoiceParam = {
        "type": "function",
        "function": {"name": "get_weather"},
    }
    plain = client.chat.completions.create(
        model="gpt-4o", messages=USER, tools=TOOLS, tool_choice=choice
    )
    chunks = list(
        client.chat.completions.create(
            model="gpt-4o",
            messages=USER,
            tools=TOOLS,
            tool_choice=choice,
            stream=True,
        )
    )
    argument_deltas = [
        tc.function.arguments
        for c in chunks
        for tc in c.choices[0].delta.tool_calls or []
        if tc.function and tc.function.arguments
    ]
    assert len(argument_deltas) > 1
    expected = (plain.choices[0].message.tool_calls or [])[0]
    assert expected.type == "function"
    assert "".join(argument_deltas) == expected.function.arguments
    assert chunks[-1].choices[0].finish_reason == "tool_calls"
    with client.chat.completions.stream(
        model="gpt-4o", messages=USER, tools=TOOLS, tool_choice=choice
    ) as stream:
        final = stream.get_final_completion()
    streamed = (final.choices[0].message.tool_calls or [])[0]
    assert streamed.function.arguments == expected.function.arguments


def test_auto_tool_choice_answers_in_text(client: openai.OpenAI) -> None:
    completion = client.chat.completions.create(
        model="gpt-4o", messages=USER, tools=TOOLS, tool_choice="auto"
    )
    assert completion.choices[0].message.tool_calls is None
    assert completion.choices[0].message.content


def test_unknown_named_tool_is_refused(client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as e:
        client.chat.completions.create(
            model="gpt-4o",
            messages=USER,
            tools=TOOLS,
            tool_choice={"type": "function", "function": {"name": "missing"}},
        )
    assert e.value.param == "tool_choice"


def test_n_choices_plain_and_interleaved_stream(client: openai.OpenAI) -> None:
    ctx_replies = [f"Reply number {i} about the harbor." for i in range(8)]
    transport = StubTransport("openai", book_with(ctx_replies))
    http = httpx2.Client(transport=transport)
    with openai.OpenAI(api_key="x", base_url="http://stub/v1", http_client=http) as c:
        plain = c.chat.completions.create(model="gpt-4o", messages=USER, n=3)
        assert [ch.index for ch in plain.choices] == [0, 1, 2]
        texts = [ch.message.content for ch in plain.choices]
        assert len(set(texts)) > 1  # choices are drawn independently
        chunks = list(c.chat.completions.create(model="gpt-4o", messages=USER, n=3, stream=True))
    order = [c.choices[0].index for c in chunks]
    assert order[:3] == [0, 1, 2]  # interleaved, not one choice after another
    streamed = [
        "".join(c.choices[0].delta.content or "" for c in chunks if c.choices[0].index == i)
        for i in range(3)
    ]
    assert streamed == texts


def test_logprobs_with_top_logprobs(client: openai.OpenAI) -> None:
    completion = client.chat.completions.create(
        model="gpt-4o", messages=USER, logprobs=True, top_logprobs=5
    )
    choice = completion.choices[0]
    assert choice.logprobs is not None and choice.logprobs.content
    entries = choice.logprobs.content
    assert "".join(e.token for e in entries) == choice.message.content
    for entry in entries:
        assert entry.logprob <= 0
        assert entry.bytes == list(entry.token.encode())
        tops = [t.logprob for t in entry.top_logprobs]
        assert len(tops) == 5 and tops == sorted(tops, reverse=True)
        assert entry.top_logprobs[0].token == entry.token
        assert entry.logprob == max(tops)
        assert sum(math.exp(lp) for lp in tops) <= 1.0
    with client.chat.completions.stream(
        model="gpt-4o", messages=USER, logprobs=True, top_logprobs=5
    ) as stream:
        final = stream.get_final_completion()
    assert final.choices[0].logprobs == choice.logprobs


def test_yes_no_reply_first_token_logprob_is_usable_for_reranking() -> None:
    body = {"model": "gpt-4o-mini", "messages": USER, "logprobs": True, "top_logprobs": 2}
    reply = call(body, book_with(["Yes"]))
    first = json.loads(reply.body)["choices"][0]["logprobs"]["content"][0]
    assert first["token"] == "Yes"
    assert isinstance(first["logprob"], float) and first["logprob"] < 0
    assert [t["token"] for t in first["top_logprobs"]] == ["Yes", "No"]
    assert first["top_logprobs"][1]["logprob"] < first["logprob"]


def test_top_logprobs_without_logprobs_is_refused() -> None:
    with pytest.raises(VendorRequestError) as e:
        call({"model": "gpt-4o", "messages": USER, "top_logprobs": 3})
    assert e.value.param == "top_logprobs"


@pytest.mark.parametrize(
    ("messages", "param"),
    [
        ([], "messages"),
        ([{"content": "no role"}], "messages[0].role"),
        ([{"role": "robot", "content": "hi"}], "messages[0].role"),
    ],
)
def test_bad_messages_raise_bad_request(client: openai.OpenAI, messages: Any, param: str) -> None:
    with pytest.raises(openai.BadRequestError) as e:
        client.chat.completions.create(model="gpt-4o", messages=messages)
    assert e.value.param == param
    assert e.value.type == "invalid_request_error"


@pytest.mark.parametrize(
    "body",
    [
        {"messages": USER},
        {"model": "gpt-4o"},
        {"model": "gpt-4o", "messages": "hello"},
        {"model": "gpt-4o", "messages": ["hello"]},
        {"model": "gpt-4o", "messages": USER, "n": 0},
        {"model": "gpt-4o", "messages": USER, "stream": "yes"},
        {"model": "gpt-4o", "messages": USER, "stream_options": {"include_usage": True}},
        {"model": "gpt-4o", "messages": USER, "tool_choice": "required"},
        {"model": "gpt-4o", "messages": USER, "tools": [{"type": "function"}]},
        {"model": "gpt-4o", "messages": USER, "response_format": {"type": "json_schema"}},
        {"model": "gpt-4o", "messages": USER, "temperature": 3},
    ],
)
def test_invalid_bodies_are_refused_not_crashed(body: dict[str, Any]) -> None:
    with pytest.raises(VendorRequestError) as e:
        call(body)
    assert e.value.status == 400


def create_with_sampling(
    client: openai.OpenAI, model: str, field: str, value: float
) -> ChatCompletion:
    if field == "temperature":
        return client.chat.completions.create(model=model, messages=USER, temperature=value)
    return client.chat.completions.create(model=model, messages=USER, top_p=value)


@pytest.mark.parametrize(
    ("model", "field"), [("o3", "temperature"), ("gpt-5", "top_p"), ("o1-mini", "temperature")]
)
def test_reasoning_model_refuses_non_default_sampling(
    client: openai.OpenAI, model: str, field: str
) -> None:
    with pytest.raises(openai.BadRequestError) as e:
        create_with_sampling(client, model, field, 0.2)
    assert e.value.param == field
    assert "Only the default (1) value is supported" in e.value.message
    # The default value itself is accepted, and non-reasoning models take any valid value.
    create_with_sampling(client, model, field, 1)
    create_with_sampling(client, "gpt-4o", field, 0.2)


@pytest.mark.parametrize(
    "extra",
    [
        {},
        {"stream": True, "stream_options": {"include_usage": True}},
        {"n": 2, "logprobs": True, "top_logprobs": 3},
        {"tools": TOOLS, "tool_choice": "required", "stream": True},
        {
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "p", "schema": Person.model_json_schema()},
            }
        },
    ],
)
def test_same_request_gives_identical_bytes(extra: dict[str, Any]) -> None:
    body = {"model": "gpt-4o", "messages": USER, **extra}
    first, second = call(body), call(json.loads(json.dumps(body)))
    assert first.chunks == second.chunks
    assert first.usage == second.usage


@pytest.mark.parametrize(
    ("fields", "param"),
    [
        ({"max_tokens": -1}, "max_tokens"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"max_tokens": 1.5}, "max_tokens"),
        ({"max_completion_tokens": "100"}, "max_completion_tokens"),
        ({"service_tier": {}}, "service_tier"),
        ({"presence_penalty": 3}, "presence_penalty"),
        ({"frequency_penalty": "low"}, "frequency_penalty"),
        ({"seed": "42"}, "seed"),
        ({"parallel_tool_calls": "yes"}, "parallel_tool_calls"),
        ({"metadata": []}, "metadata"),
        ({"stop": [1, 2]}, "stop"),
        ({"stream": True, "stream_options": {"include_usage": "yes"}}, "include_usage"),
    ],
)
def test_fields_of_the_wrong_type_or_value_get_the_vendors_400(
    client: openai.OpenAI, fields: dict[str, Any], param: str
) -> None:
    # Record mode once answered 200 to each of these, which OpenAI refuses.
    with pytest.raises(openai.BadRequestError) as e:
        client.post(
            "/chat/completions",
            body={"model": "gpt-4o", "messages": USER, **fields},
            cast_to=object,
        )
    assert e.value.param == param
    assert e.value.type == "invalid_request_error"
