"""The Anthropic Messages stub, driven through the real anthropic SDK (sync and async).

Each test sends what an arm would send and checks what the arm relies on: the SDK parses the
reply without complaint, streams agree with plain replies, tool inputs and structured outputs
validate, usage adds up, and bad requests raise the SDK's typed 400.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from enum import StrEnum
from typing import Any

import anthropic
import httpx2
import jsonschema
import pydantic
import pytest
from anthropic.types import Message, MessageDeltaUsage, RawMessageStreamEvent, Usage

from stubs.anthropic.messages import build_message
from stubs.request import StubRequest
from stubs.rules.context import StubContext
from stubs.rules.replies import ReplyBook, StubsFile
from tests.stubs.sdk_transport import StubTransport, body_digest
from vendors.tokens import estimate_input_tokens, estimate_tokens

MODEL = "claude-sonnet-4-6"
USER = [{"role": "user", "content": "Please remember that my sister Ana lives in Porto."}]
WEATHER = {
    "name": "get_weather",
    "description": "Current weather for a city",
    "input_schema": {
        "type": "object",
        "properties": {
            "city": {"type": "string", "minLength": 2},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "days": {"type": "integer", "minimum": 1, "maximum": 7},
            "where": {
                "type": "object",
                "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}},
                "required": ["lat", "lon"],
            },
        },
        "required": ["city", "unit", "days"],
        "additionalProperties": False,
    },
}
SAVE = {
    "name": "save_memory",
    "input_schema": {
        "type": "object",
        "properties": {"facts": {"type": "array", "items": {"type": "string"}, "minItems": 1}},
        "required": ["facts"],
    },
}
TOOL_SCHEMAS = {t["name"]: t["input_schema"] for t in (WEATHER, SAVE)}


def _book(*replies: str) -> ReplyBook:
    return ReplyBook(StubsFile(replies={"main": list(replies)}))


@pytest.fixture
def transport() -> StubTransport:
    return StubTransport("anthropic")


@pytest.fixture
def client(transport: StubTransport) -> Iterator[anthropic.Anthropic]:
    http = httpx2.Client(transport=transport)
    with anthropic.Anthropic(
        api_key="x", base_url="http://stub", http_client=http, max_retries=0
    ) as c:
        yield c


def _async_client(transport: StubTransport) -> anthropic.AsyncAnthropic:
    http = httpx2.AsyncClient(transport=transport)
    return anthropic.AsyncAnthropic(
        api_key="x", base_url="http://stub", http_client=http, max_retries=0
    )


def _events(chunks: list[bytes]) -> list[dict[str, Any]]:
    """Each chunk must be exactly one complete SSE event; returns the parsed data objects."""
    out = []
    for chunk in chunks:
        text = chunk.decode()
        assert text.endswith("\n\n") and text.count("\n\n") == 1, text
        name_line, data_line = text.rstrip("\n").split("\n")
        data = json.loads(data_line.removeprefix("data: "))
        assert name_line == f"event: {data['type']}"
        out.append(data)
    return out


def _request(body: dict[str, Any]) -> StubRequest:
    return StubRequest("anthropic", "anthropic.messages", body, body_digest(body))


# --- plain replies ---------------------------------------------------------------------------


def test_plain_reply_is_a_full_message(client: anthropic.Anthropic, transport: StubTransport):
    msg = client.messages.create(model=MODEL, max_tokens=200, messages=USER)
    body = json.loads(transport.replies[-1].body)
    # Nothing outside the SDK's own types: an unknown field would be silently dropped upstream.
    assert set(body) <= set(Message.model_fields)
    assert set(body["usage"]) <= set(Usage.model_fields)
    assert msg.id.startswith("msg_") and msg.type == "message" and msg.role == "assistant"
    assert msg.model == MODEL
    assert msg.stop_reason == "end_turn" and msg.stop_sequence is None
    [block] = msg.content
    assert block.type == "text" and "Ana lives in Porto" in block.text
    u = msg.usage
    assert u.input_tokens == estimate_input_tokens(body_of(transport), ("system", "messages"))
    assert u.output_tokens == estimate_tokens(block.text)
    assert u.cache_creation_input_tokens == 0 and u.cache_read_input_tokens == 0
    assert u.cache_creation is not None and u.cache_creation.ephemeral_5m_input_tokens == 0
    assert u.output_tokens_details is not None and u.output_tokens_details.thinking_tokens == 0
    assert u.service_tier == "standard"
    assert transport.replies[-1].model == MODEL
    assert transport.replies[-1].usage.output_tokens == u.output_tokens


def body_of(transport: StubTransport) -> dict[str, Any]:
    return dict(json.loads(transport.requests[-1].content))


def test_text_is_cut_at_max_tokens(transport: StubTransport):
    long_reply = " ".join(["word"] * 200)
    transport.ctx = StubContext(book=_book(long_reply))
    with anthropic.Anthropic(
        api_key="x", base_url="http://stub", http_client=httpx2.Client(transport=transport)
    ) as client:
        msg = client.messages.create(model=MODEL, max_tokens=7, messages=USER)
    assert msg.stop_reason == "max_tokens"
    assert msg.usage.output_tokens <= 7
    assert long_reply.startswith(msg.content[0].text)  # type: ignore[union-attr]


def test_stop_sequence_ends_the_text(transport: StubTransport):
    transport.ctx = StubContext(book=_book("alpha beta STOP gamma"))
    with anthropic.Anthropic(
        api_key="x", base_url="http://stub", http_client=httpx2.Client(transport=transport)
    ) as client:
        msg = client.messages.create(
            model=MODEL, max_tokens=100, messages=USER, stop_sequences=["gamma", "STOP"]
        )
    assert msg.content[0].text == "alpha beta "  # type: ignore[union-attr]
    assert msg.stop_reason == "stop_sequence" and msg.stop_sequence == "STOP"


# --- streaming -------------------------------------------------------------------------------


def test_stream_yields_text_and_equals_plain_reply(
    client: anthropic.Anthropic, transport: StubTransport
):
    plain = client.messages.create(model=MODEL, max_tokens=200, messages=USER)
    with client.messages.stream(model=MODEL, max_tokens=200, messages=USER) as stream:
        pieces = list(stream.text_stream)
        final = stream.get_final_message()
    assert len(pieces) > 2
    assert "".join(pieces) == plain.content[0].text  # type: ignore[union-attr]
    assert final.model_dump() == plain.model_dump()

    reply = transport.replies[-1]
    assert reply.stream and reply.content_type == "text/event-stream"
    events = _events(reply.chunks)
    kinds = [e["type"] for e in events]
    assert kinds[:2] == ["message_start", "ping"]
    assert kinds[2] == "content_block_start" and kinds[-3] == "content_block_stop"
    assert set(kinds[3:-3]) == {"content_block_delta"}
    assert kinds[-2:] == ["message_delta", "message_stop"]
    start = events[0]["message"]
    assert start["content"] == [] and start["stop_reason"] is None
    assert start["usage"]["output_tokens"] == 1
    assert start["usage"]["input_tokens"] == plain.usage.input_tokens
    assert start["usage"]["cache_creation_input_tokens"] == 0
    delta = events[-2]
    # message_delta usage is cumulative: the full output count, not an increment over 1.
    delta_usage = MessageDeltaUsage.model_validate(delta["usage"])
    assert delta_usage.output_tokens == plain.usage.output_tokens
    typed = pydantic.TypeAdapter(RawMessageStreamEvent)
    for event in events:
        if event["type"] != "ping":  # the SDK skips pings before typing events
            typed.validate_python(event)


async def test_async_create_and_stream_agree(transport: StubTransport):
    async with _async_client(transport) as client:
        plain = await client.messages.create(model=MODEL, max_tokens=200, messages=USER)
        async with client.messages.stream(model=MODEL, max_tokens=200, messages=USER) as stream:
            text = "".join([t async for t in stream.text_stream])
            final = await stream.get_final_message()
    assert text == plain.content[0].text  # type: ignore[union-attr]
    assert final.model_dump() == plain.model_dump()


# --- tools -----------------------------------------------------------------------------------


def test_forced_tool_input_validates(client: anthropic.Anthropic):
    msg = client.messages.create(
        model=MODEL,
        max_tokens=300,
        messages=USER,
        tools=[WEATHER, SAVE],  # type: ignore[list-item]
        tool_choice={"type": "tool", "name": "get_weather"},
    )
    assert msg.stop_reason == "tool_use"
    [block] = msg.content
    assert block.type == "tool_use" and block.name == "get_weather"
    assert block.id.startswith("toolu_")
    jsonschema.validate(block.input, WEATHER["input_schema"])


def test_any_tool_choice_picks_a_tool_and_streams_its_input(
    client: anthropic.Anthropic, transport: StubTransport
):
    kwargs: dict[str, Any] = {
        "model": MODEL,
        "max_tokens": 300,
        "messages": USER,
        "tools": [WEATHER, SAVE],
        "tool_choice": {"type": "any"},
    }
    plain = client.messages.create(**kwargs)
    [block] = plain.content
    assert block.type == "tool_use" and block.name in TOOL_SCHEMAS
    jsonschema.validate(block.input, TOOL_SCHEMAS[block.name])
    with client.messages.stream(**kwargs) as stream:
        final = stream.get_final_message()
    assert final.model_dump() == plain.model_dump()
    events = _events(transport.replies[-1].chunks)
    deltas = [e["delta"] for e in events if e["type"] == "content_block_delta"]
    assert len(deltas) > 1 and all(d["type"] == "input_json_delta" for d in deltas)
    assert json.loads("".join(d["partial_json"] for d in deltas)) == block.input


def test_auto_or_no_tool_choice_gives_text(client: anthropic.Anthropic):
    for choice in ({"type": "auto"}, {"type": "none"}):
        msg = client.messages.create(
            model=MODEL,
            max_tokens=100,
            messages=USER,
            tools=[WEATHER],  # type: ignore[list-item]
            tool_choice=choice,  # type: ignore[arg-type]
        )
        assert [b.type for b in msg.content] == ["text"] and msg.stop_reason == "end_turn"


# --- thinking --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "thinking", [{"type": "enabled", "budget_tokens": 1024}, {"type": "adaptive"}]
)
def test_thinking_block_comes_first_and_is_billed(
    client: anthropic.Anthropic, transport: StubTransport, thinking: dict[str, Any]
):
    kwargs: dict[str, Any] = {
        "model": MODEL,
        "max_tokens": 2048,
        "messages": USER,
        "thinking": thinking,
    }
    msg = client.messages.create(**kwargs)
    assert [b.type for b in msg.content] == ["thinking", "text"]
    think, text = msg.content
    assert think.thinking and think.signature  # type: ignore[union-attr]
    details = msg.usage.output_tokens_details
    assert details is not None
    assert details.thinking_tokens == estimate_tokens(think.thinking)  # type: ignore[union-attr]
    assert msg.usage.output_tokens == details.thinking_tokens + estimate_tokens(text.text)  # type: ignore[union-attr]
    assert transport.replies[-1].usage.reasoning_tokens == details.thinking_tokens

    with client.messages.stream(**kwargs) as stream:
        final = stream.get_final_message()
    assert final.model_dump() == msg.model_dump()
    delta_types = [
        e["delta"]["type"]
        for e in _events(transport.replies[-1].chunks)
        if e["type"] == "content_block_delta" and e["index"] == 0
    ]
    assert delta_types[-1] == "signature_delta"
    assert set(delta_types[:-1]) == {"thinking_delta"}


def test_omitted_thinking_is_still_billed(client: anthropic.Anthropic):
    msg = client.messages.create(
        model=MODEL,
        max_tokens=2048,
        messages=USER,
        thinking={"type": "adaptive", "display": "omitted"},
    )
    think = msg.content[0]
    assert think.type == "thinking" and think.thinking == "" and think.signature
    assert msg.usage.output_tokens_details is not None
    assert msg.usage.output_tokens_details.thinking_tokens > 0


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (
            {"thinking": {"type": "enabled", "budget_tokens": 1024}, "temperature": 0.2},
            "temperature",
        ),
        ({"thinking": {"type": "adaptive"}, "temperature": 0.0}, "temperature"),
        ({"thinking": {"type": "enabled", "budget_tokens": 512}}, "budget_tokens"),
        ({"thinking": {"type": "enabled", "budget_tokens": 4096}}, "max_tokens"),
        (
            {
                "thinking": {"type": "adaptive"},
                "tools": [WEATHER],
                "tool_choice": {"type": "tool", "name": "get_weather"},
            },
            "tool_choice",
        ),
    ],
)
def test_thinking_refusals_match_the_vendor(
    client: anthropic.Anthropic, extra: dict[str, Any], needle: str
):
    with pytest.raises(anthropic.BadRequestError) as info:
        client.messages.create(model=MODEL, max_tokens=2048, messages=USER, extra_body=extra)
    assert needle in str(info.value.message)


def test_temperature_without_thinking_is_accepted(client: anthropic.Anthropic):
    msg = client.messages.create(
        model=MODEL, max_tokens=100, messages=USER, extra_body={"temperature": 0.2}
    )
    assert msg.stop_reason == "end_turn"


# --- structured output -----------------------------------------------------------------------


class Mood(StrEnum):
    happy = "happy"
    sad = "sad"


class Person(pydantic.BaseModel):
    name: str
    age: int
    mood: Mood
    friends: list[str]
    nickname: str | None = None


class Memory(pydantic.BaseModel):
    people: list[Person]
    summary: str


def test_parse_returns_the_pydantic_model(client: anthropic.Anthropic, transport: StubTransport):
    parsed = client.messages.parse(
        model=MODEL, max_tokens=1000, messages=USER, output_format=Memory
    )
    assert isinstance(parsed.parsed_output, Memory)
    sent = body_of(transport)["output_config"]["format"]
    jsonschema.validate(json.loads(parsed.content[0].text), sent["schema"])  # type: ignore[union-attr]


class Rating(pydantic.BaseModel):
    stars: int = pydantic.Field(ge=1, le=5)
    code: str = pydantic.Field(pattern=r"^[A-Z]{3}-[0-9]{2}$")
    reasons: list[str] = pydantic.Field(min_length=2, max_length=3)


@pytest.mark.parametrize("text", ["first", "second", "third", "fourth"])
def test_parse_honours_constraints_the_sdk_moved_to_descriptions(
    client: anthropic.Anthropic, text: str
):
    # transform_schema drops `le=5` etc. from the schema it sends; the real model follows the
    # hint left in the description, and the SDK's pydantic validation insists on it.
    parsed = client.messages.parse(
        model=MODEL,
        max_tokens=1000,
        messages=[{"role": "user", "content": text}],
        output_format=Rating,
    )
    assert isinstance(parsed.parsed_output, Rating)


async def test_async_stream_with_output_format(transport: StubTransport):
    async with (
        _async_client(transport) as client,
        client.messages.stream(
            model=MODEL, max_tokens=1000, messages=USER, output_format=Memory
        ) as stream,
    ):
        final = await stream.get_final_message()
    assert isinstance(final.parsed_output, Memory)


def test_a_scripted_reply_that_fits_the_schema_is_kept(transport: StubTransport):
    scripted = '{"people":[],"summary":"nothing to keep"}'
    transport.ctx = StubContext(book=_book(scripted))
    with anthropic.Anthropic(
        api_key="x", base_url="http://stub", http_client=httpx2.Client(transport=transport)
    ) as client:
        parsed = client.messages.parse(
            model=MODEL, max_tokens=1000, messages=USER, output_format=Memory
        )
    assert parsed.content[0].text == scripted  # type: ignore[union-attr]
    assert parsed.parsed_output == Memory(people=[], summary="nothing to keep")


# --- prompt caching and count_tokens ---------------------------------------------------------


def _cached_request() -> dict[str, Any]:
    return {
        "system": [
            {
                "type": "text",
                "text": "You are a careful memory assistant. " * 20,
                "cache_control": {"type": "ephemeral"},
            },
        ],
        "tools": [{**WEATHER, "cache_control": {"type": "ephemeral", "ttl": "1h"}}],
        "messages": USER,
    }


def test_cache_marks_report_cache_writes(client: anthropic.Anthropic):
    req = _cached_request()
    msg = client.messages.create(model=MODEL, max_tokens=100, **req)
    count = client.messages.count_tokens(model=MODEL, **req)
    u = msg.usage
    assert u.cache_creation is not None
    # The tool comes first in cache order and carries the 1h mark; the system block the 5m one.
    assert u.cache_creation.ephemeral_1h_input_tokens > 0
    assert u.cache_creation.ephemeral_5m_input_tokens > 50
    assert u.cache_creation_input_tokens == (
        u.cache_creation.ephemeral_1h_input_tokens + u.cache_creation.ephemeral_5m_input_tokens
    )
    assert u.cache_read_input_tokens == 0
    assert u.input_tokens > 0  # the messages after the last mark are not cached
    assert u.input_tokens + u.cache_creation_input_tokens == count.input_tokens


def test_top_level_cache_control_caches_the_whole_prompt():
    body = {
        "model": MODEL,
        "max_tokens": 50,
        "messages": USER,
        "cache_control": {"type": "ephemeral"},
    }
    message, _, usage = build_message(_request(body), StubContext())
    total = estimate_input_tokens(body, ("system", "messages", "tools"))
    assert message["usage"]["cache_creation_input_tokens"] == total
    assert message["usage"]["input_tokens"] == 0
    assert usage.cache_write_tokens == total and usage.input_tokens == 0


def test_more_than_four_cache_marks_is_refused(client: anthropic.Anthropic):
    mark = {"type": "ephemeral"}
    blocks = [{"type": "text", "text": f"part {i}", "cache_control": mark} for i in range(5)]
    with pytest.raises(anthropic.BadRequestError, match="maximum of 4"):
        client.messages.create(
            model=MODEL,
            max_tokens=50,
            messages=[{"role": "user", "content": blocks}],  # type: ignore[list-item]
        )


def test_count_tokens_counts_system_messages_and_tools(client: anthropic.Anthropic):
    small = client.messages.count_tokens(model=MODEL, messages=USER)
    big = client.messages.count_tokens(
        model=MODEL,
        messages=USER,
        system="Be brief.",
        tools=[WEATHER],  # type: ignore[list-item]
    )
    assert small.input_tokens == estimate_input_tokens({"messages": USER}, ("messages",))
    assert big.input_tokens > small.input_tokens
    with pytest.raises(anthropic.BadRequestError, match="messages"):
        client.messages.count_tokens(model=MODEL, messages=[])


# --- validation ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ({"model": MODEL, "messages": USER}, "max_tokens: Field required"),
        ({"max_tokens": 10, "messages": USER}, "model: Field required"),
        ({"model": MODEL, "max_tokens": 10}, "messages: Field required"),
        ({"model": MODEL, "max_tokens": 0, "messages": USER}, "max_tokens"),
        ({"model": MODEL, "max_tokens": "10", "messages": USER}, "max_tokens"),
        ({"model": MODEL, "max_tokens": 10, "messages": []}, "messages"),
        ({"model": MODEL, "max_tokens": 10, "messages": ["hi"]}, "messages.0"),
        (
            {"model": MODEL, "max_tokens": 10, "messages": [{"role": "system", "content": "x"}]},
            "system",
        ),
        ({"model": MODEL, "max_tokens": 10, "messages": [{"role": "user"}]}, "content"),
        (
            {"model": MODEL, "max_tokens": 10, "messages": [{"role": "user", "content": 3}]},
            "content",
        ),
        (
            {"model": MODEL, "max_tokens": 10, "messages": USER, "tools": [{"name": "t"}]},
            "input_schema",
        ),
        (
            {
                "model": MODEL,
                "max_tokens": 10,
                "messages": USER,
                "tools": [WEATHER],
                "tool_choice": {"type": "tool", "name": "nope"},
            },
            "nope",
        ),
        (
            {"model": MODEL, "max_tokens": 10, "messages": USER, "tool_choice": {"type": "any"}},
            "tool_choice",
        ),
        (
            {
                "model": MODEL,
                "max_tokens": 10,
                "messages": USER,
                "output_config": {"format": {"type": "json_schema"}},
            },
            "schema",
        ),
    ],
)
def test_bad_requests_raise_bad_request_error(
    client: anthropic.Anthropic, body: dict[str, Any], needle: str
):
    with pytest.raises(anthropic.BadRequestError) as info:
        client.post("/v1/messages", body=body, cast_to=Message)
    assert info.value.status_code == 400
    assert needle in str(info.value.message)


# --- determinism -----------------------------------------------------------------------------


def test_same_request_gives_identical_bytes(client: anthropic.Anthropic, transport: StubTransport):
    kwargs: dict[str, Any] = {
        "model": MODEL,
        "max_tokens": 2048,
        "messages": USER,
        "thinking": {"type": "adaptive"},
        "output_config": {"format": {"type": "json_schema", "schema": Memory.model_json_schema()}},
    }
    for _ in range(2):
        client.messages.create(**kwargs)
        with client.messages.stream(**kwargs) as stream:
            stream.until_done()
    plain_a, stream_a, plain_b, stream_b = transport.replies[-4:]
    assert plain_a.body == plain_b.body
    assert stream_a.chunks == stream_b.chunks


def test_different_user_text_gives_a_different_reply(
    client: anthropic.Anthropic, transport: StubTransport
):
    client.messages.create(model=MODEL, max_tokens=100, messages=USER)
    client.messages.create(
        model=MODEL, max_tokens=100, messages=[{"role": "user", "content": "What is 2+2?"}]
    )
    first, second = (json.loads(r.body) for r in transport.replies[-2:])
    assert first["id"] != second["id"]
    assert first["content"] != second["content"]


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"speed": []}, "speed"),
        ({"inference_geo": {}}, "inference_geo"),
        ({"service_tier": 1}, "service_tier"),
        ({"top_k": -1}, "top_k"),
        ({"top_p": "high"}, "top_p"),
        ({"metadata": ["user"]}, "metadata"),
        ({"metadata": {"user_id": 7}}, "metadata.user_id"),
        (
            {"messages": [{"role": "user", "content": [{"type": "image", "source": "a.png"}]}]},
            "source",
        ),
        (
            {"messages": [{"role": "user", "content": [{"type": "document", "source": None}]}]},
            "source",
        ),
    ],
)
def test_fields_of_the_wrong_type_get_the_vendors_400_not_a_reply(
    client: anthropic.Anthropic, fields: dict[str, Any], says: str
) -> None:
    # Record mode once answered 200 to each of these, which the vendor refuses.
    body = {"model": MODEL, "max_tokens": 64, "messages": USER, **fields}
    with pytest.raises(anthropic.BadRequestError) as info:
        client.post("/v1/messages", body=body, cast_to=object)
    assert says in info.value.message
