"""POST /v1/responses stub, driven through the real openai SDK (sync and async)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any, Literal

import httpx2
import jsonschema
import openai
import pydantic
import pytest
from openai.types.responses import FunctionToolParam, Response, ResponseStreamEvent
from pydantic import TypeAdapter

from stubs.openai.responses import responses
from stubs.request import StubRequest
from stubs.rules.context import StubContext
from stubs.rules.replies import ReplyBook, StubsFile
from tests.stubs.sdk_transport import StubTransport, body_digest
from vendors.errors import VendorRequestError

PROMPT = "Remind me what I said about the lighthouse keeper."
WEATHER_PARAMS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "minLength": 1},
        "unit": {"type": "string", "enum": ["c", "f"]},
    },
    "required": ["city", "unit"],
    "additionalProperties": False,
}
TOOLS: list[FunctionToolParam] = [
    {"type": "function", "name": "get_weather", "parameters": WEATHER_PARAMS, "strict": True},
    {"type": "function", "name": "noop", "parameters": None, "strict": False},
]
EVENTS = TypeAdapter(ResponseStreamEvent)


class Note(pydantic.BaseModel):
    title: str
    priority: Literal["low", "high"]
    words: list[str]


def call(body: dict[str, Any], ctx: StubContext | None = None) -> Any:
    req = StubRequest("openai", "openai.responses", body, body_digest(body))
    return responses(req, ctx or StubContext())


def sse_events(chunks: list[bytes]) -> list[dict[str, Any]]:
    """Each chunk is one `event: <type>` + `data: <json>` SSE event whose type names match."""
    out = []
    for chunk in chunks:
        head, data, tail = chunk.decode().split("\n", 2)
        assert head.startswith("event: ") and data.startswith("data: ") and tail == "\n"
        event = json.loads(data[len("data: ") :])
        assert event["type"] == head[len("event: ") :]
        out.append(event)
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


def test_plain_reply_is_a_completed_response(
    client: openai.OpenAI, transport: StubTransport
) -> None:
    response = client.responses.create(model="gpt-4.1", input=PROMPT)
    strict = Response.model_validate_json(transport.replies[-1].body, strict=True)
    assert strict == response
    assert response.id.startswith("resp_")
    assert response.object == "response" and response.status == "completed"
    assert response.created_at == 1735689600
    assert response.model == "gpt-4.1"
    [message] = response.output
    assert message.type == "message" and message.id.startswith("msg_")
    assert message.role == "assistant" and message.status == "completed"
    assert "lighthouse keeper" in response.output_text
    usage = response.usage
    assert usage is not None
    assert usage.total_tokens == usage.input_tokens + usage.output_tokens
    assert usage.input_tokens_details.cached_tokens == 0
    assert usage.output_tokens_details.reasoning_tokens == 0
    harness = transport.replies[-1].usage
    assert (harness.input_tokens, harness.output_tokens) == (
        usage.input_tokens,
        usage.output_tokens,
    )


def test_instructions_are_the_system_prompt(client: openai.OpenAI) -> None:
    rule = {"name": "pirate", "system_contains": "pirate", "reply": "Arr, $user_first_words"}
    book = ReplyBook(StubsFile.model_validate({"rules": [rule]}))
    http = httpx2.Client(transport=StubTransport("openai", StubContext(book=book)))
    with openai.OpenAI(api_key="x", base_url="http://stub/v1", http_client=http) as pirate:
        response = pirate.responses.create(
            model="gpt-4.1",
            input=[{"role": "user", "content": "hello there"}],
            instructions="You are a pirate.",
        )
    assert response.output_text == "Arr, hello there"
    assert response.instructions == "You are a pirate."


def test_reasoning_model_reports_reasoning_inside_output_tokens(
    client: openai.OpenAI, transport: StubTransport
) -> None:
    response = client.responses.create(model="o3", input=PROMPT, reasoning={"effort": "low"})
    assert [item.type for item in response.output] == ["reasoning", "message"]
    usage = response.usage
    assert usage is not None
    reasoning = usage.output_tokens_details.reasoning_tokens
    assert 0 < reasoning < usage.output_tokens
    harness = transport.replies[-1].usage
    assert harness.reasoning_tokens == reasoning
    assert harness.output_tokens == usage.output_tokens
    assert response.output_text  # the reasoning item does not hide the text


def test_stream_events_in_order_with_increasing_sequence(
    client: openai.OpenAI, transport: StubTransport
) -> None:
    plain = client.responses.create(model="gpt-4.1", input=PROMPT)
    events = list(client.responses.create(model="gpt-4.1", input=PROMPT, stream=True))
    reply = transport.replies[-1]
    assert reply.stream and reply.content_type == "text/event-stream"
    raw = sse_events(reply.chunks)
    for event in raw:
        EVENTS.validate_python(event, strict=True)
    assert [e.sequence_number for e in events] == list(range(len(events)))
    kinds = [e.type for e in events]
    deltas = kinds.count("response.output_text.delta")
    assert deltas > 2
    assert kinds == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        *["response.output_text.delta"] * deltas,
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert text == plain.output_text
    completed = events[-1]
    assert completed.type == "response.completed"
    assert completed.response.usage == plain.usage
    assert completed.response.output_text == plain.output_text
    assert events[0].type == "response.created" and events[0].response.usage is None


def test_stream_helper_final_response_matches_plain(client: openai.OpenAI) -> None:
    plain = client.responses.create(model="gpt-5-mini", input=PROMPT)
    with client.responses.stream(model="gpt-5-mini", input=PROMPT) as stream:
        deltas = [e.delta for e in stream if e.type == "response.output_text.delta"]
        final = stream.get_final_response()
    assert "".join(deltas) == plain.output_text
    assert final.output_text == plain.output_text
    assert final.usage == plain.usage


async def test_async_plain_and_stream(aclient: openai.AsyncOpenAI) -> None:
    plain = await aclient.responses.create(model="gpt-4.1", input=PROMPT)
    stream = await aclient.responses.create(model="gpt-4.1", input=PROMPT, stream=True)
    text = "".join([e.delta async for e in stream if e.type == "response.output_text.delta"])
    assert plain.output_text and text == plain.output_text


def test_parse_with_pydantic_model(client: openai.OpenAI) -> None:
    response = client.responses.parse(model="gpt-4.1", input=PROMPT, text_format=Note)
    assert isinstance(response.output_parsed, Note)
    assert Note.model_validate_json(response.output_text) == response.output_parsed


async def test_async_parse_and_stream_parse(aclient: openai.AsyncOpenAI) -> None:
    response = await aclient.responses.parse(model="o4-mini", input=PROMPT, text_format=Note)
    assert isinstance(response.output_parsed, Note)
    async with aclient.responses.stream(model="o4-mini", input=PROMPT, text_format=Note) as s:
        final = await s.get_final_response()
    assert final.output_parsed == response.output_parsed


def test_json_object_format_gives_an_object(client: openai.OpenAI) -> None:
    response = client.responses.create(
        model="gpt-4.1", input="Reply in json please", text={"format": {"type": "json_object"}}
    )
    assert isinstance(json.loads(response.output_text), dict)
    with pytest.raises(openai.BadRequestError):
        client.responses.create(
            model="gpt-4.1", input=PROMPT, text={"format": {"type": "json_object"}}
        )


@pytest.mark.parametrize("tool_choice", ["required", {"type": "function", "name": "get_weather"}])
def test_forced_function_call_arguments_validate(client: openai.OpenAI, tool_choice: Any) -> None:
    response = client.responses.create(
        model="gpt-4.1", input=PROMPT, tools=TOOLS, tool_choice=tool_choice
    )
    [item] = response.output
    assert item.type == "function_call"
    assert item.call_id.startswith("call_")
    schemas = {"get_weather": WEATHER_PARAMS, "noop": {"type": "object"}}
    jsonschema.validate(json.loads(item.arguments), schemas[item.name])
    if isinstance(tool_choice, dict):
        assert item.name == "get_weather"
    assert response.output_text == ""


def test_forced_function_call_streams_arguments(client: openai.OpenAI) -> None:
    choice: Any = {"type": "function", "name": "get_weather"}
    plain = client.responses.create(model="gpt-4.1", input=PROMPT, tools=TOOLS, tool_choice=choice)
    with client.responses.stream(
        model="gpt-4.1", input=PROMPT, tools=TOOLS, tool_choice=choice
    ) as stream:
        deltas = [e.delta for e in stream if e.type == "response.function_call_arguments.delta"]
        final = stream.get_final_response()
    [expected] = plain.output
    [streamed] = final.output
    assert expected.type == "function_call" and streamed.type == "function_call"
    assert len(deltas) > 1 and "".join(deltas) == expected.arguments
    assert streamed.arguments == expected.arguments
    assert streamed.parsed_arguments == json.loads(expected.arguments)


def test_auto_tool_choice_answers_in_text(client: openai.OpenAI) -> None:
    response = client.responses.create(model="gpt-4.1", input=PROMPT, tools=TOOLS)
    assert [item.type for item in response.output] == ["message"]


def test_output_text_logprobs_when_included() -> None:
    body = {
        "model": "gpt-4.1",
        "input": PROMPT,
        "top_logprobs": 4,
        "include": ["message.output_text.logprobs"],
    }
    part = json.loads(call(body).body)["output"][0]["content"][0]
    entries = part["logprobs"]
    assert "".join(e["token"] for e in entries) == part["text"]
    for entry in entries:
        tops = [t["logprob"] for t in entry["top_logprobs"]]
        assert len(tops) == 4 and tops == sorted(tops, reverse=True)
        assert entry["logprob"] == tops[0] <= 0


def test_missing_input_raises_bad_request(client: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as e:
        client.responses.create(model="gpt-4.1")
    assert e.value.param == "input"


@pytest.mark.parametrize(("model", "field"), [("o3", "temperature"), ("gpt-5", "top_p")])
def test_reasoning_model_refuses_non_default_sampling(
    client: openai.OpenAI, model: str, field: str
) -> None:
    with pytest.raises(openai.BadRequestError) as e:
        if field == "temperature":
            client.responses.create(model=model, input=PROMPT, temperature=0.3)
        else:
            client.responses.create(model=model, input=PROMPT, top_p=0.3)
    assert e.value.param == field
    assert "Only the default (1) value is supported" in e.value.message
    client.responses.create(model="gpt-4.1", input=PROMPT, temperature=0.3)


@pytest.mark.parametrize(
    "body",
    [
        {"input": PROMPT},
        {"model": "gpt-4.1", "input": 42},
        {"model": "gpt-4.1", "input": ["hi"]},
        {"model": "gpt-4.1", "input": [{"role": "robot", "content": "hi"}]},
        {"model": "gpt-4.1", "input": PROMPT, "instructions": ["x"]},
        {"model": "gpt-4.1", "input": PROMPT, "tool_choice": "required"},
        {"model": "gpt-4.1", "input": PROMPT, "tools": [{"type": "function"}]},
        {"model": "gpt-4.1", "input": PROMPT, "text": {"format": {"type": "json_schema"}}},
        {
            "model": "gpt-4.1",
            "input": PROMPT,
            "tools": TOOLS,
            "tool_choice": {"type": "function", "name": "missing"},
        },
    ],
)
def test_invalid_bodies_are_refused_not_crashed(body: dict[str, Any]) -> None:
    with pytest.raises(VendorRequestError) as e:
        call(body)
    assert e.value.status == 400


@pytest.mark.parametrize(
    "extra",
    [
        {},
        {"stream": True},
        {"model": "o3", "stream": True},
        {"tools": TOOLS, "tool_choice": "required", "stream": True},
        {
            "text": {
                "format": {
                    "type": "json_schema",
                    "name": "note",
                    "strict": True,
                    "schema": Note.model_json_schema(),
                }
            }
        },
    ],
)
def test_same_request_gives_identical_bytes(extra: dict[str, Any]) -> None:
    body = {"model": "gpt-4.1", "input": PROMPT, **extra}
    first, second = call(body), call(json.loads(json.dumps(body)))
    assert first.chunks == second.chunks
    assert first.usage == second.usage


@pytest.mark.parametrize(
    ("fields", "param"),
    [
        ({"max_output_tokens": -1}, "max_output_tokens"),
        ({"max_output_tokens": 8}, "max_output_tokens"),
        ({"max_output_tokens": "64"}, "max_output_tokens"),
        ({"service_tier": []}, "service_tier"),
        ({"store": "yes"}, "store"),
        ({"stream_options": "yes"}, "stream_options"),
        ({"previous_response_id": 12}, "previous_response_id"),
    ],
)
def test_fields_of_the_wrong_type_or_value_get_the_vendors_400(
    client: openai.OpenAI, fields: dict[str, Any], param: str
) -> None:
    # Record mode once answered 200 to each of these, which OpenAI refuses.
    with pytest.raises(openai.BadRequestError) as e:
        client.post(
            "/responses", body={"model": "gpt-4.1", "input": "hi", **fields}, cast_to=object
        )
    assert e.value.param == param
