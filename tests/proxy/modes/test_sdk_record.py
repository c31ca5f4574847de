"""The official SDKs, sync and async, against a running record-mode proxy: every reply parses."""

from __future__ import annotations

import json
import warnings

import jsonschema
import pytest
from pydantic import BaseModel

from tests.proxy.proxy_process import ProxyProcess

pytestmark = pytest.mark.integration

HAIKU = "claude-haiku-4-5-20251001"
USER = [{"role": "user", "content": "Remember that my sister lives in Lisbon."}]
WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Weather for a city",
    "input_schema": {
        "type": "object",
        "properties": {
            "city": {"type": "string", "minLength": 2},
            "unit": {"enum": ["c", "f"]},
            "days": {"type": "integer", "minimum": 1, "maximum": 7},
        },
        "required": ["city", "unit"],
        "additionalProperties": False,
    },
}


class Fact(BaseModel):
    subject: str
    relation: str
    confidence: float


class Facts(BaseModel):
    facts: list[Fact]
    summary: str | None


@pytest.fixture(autouse=True)
def _no_warnings() -> None:
    warnings.simplefilter("error")


def test_anthropic_plain_stream_tools_thinking_parse_count(record_proxy: ProxyProcess) -> None:
    client = record_proxy.anthropic()
    plain = client.messages.create(model=HAIKU, max_tokens=200, messages=USER)
    assert plain.content[0].type == "text" and plain.content[0].text
    assert plain.usage.input_tokens > 0
    with client.messages.stream(model=HAIKU, max_tokens=200, messages=USER) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text == final.content[0].text == plain.content[0].text  # type: ignore[union-attr]

    tool = client.messages.create(
        model=HAIKU,
        max_tokens=300,
        messages=USER,
        tools=[WEATHER_TOOL],  # type: ignore[list-item]
        tool_choice={"type": "tool", "name": "get_weather"},
    )
    block = tool.content[-1]
    assert tool.stop_reason == "tool_use" and block.type == "tool_use"
    jsonschema.validate(block.input, WEATHER_TOOL["input_schema"])

    thinking = client.messages.create(
        model="claude-sonnet-4-6",
        max_tokens=4000,
        messages=USER,
        thinking={"type": "enabled", "budget_tokens": 2000},
    )
    assert [b.type for b in thinking.content] == ["thinking", "text"]

    parsed = client.messages.parse(model=HAIKU, max_tokens=800, messages=USER, output_format=Facts)
    assert isinstance(parsed.parsed_output, Facts)

    count = client.messages.count_tokens(model=HAIKU, messages=USER)
    assert count.input_tokens > 0
    assert [m.id for m in client.models.list()]


async def test_anthropic_async(record_proxy: ProxyProcess) -> None:
    async with record_proxy.async_anthropic() as client:
        plain = await client.messages.create(model=HAIKU, max_tokens=200, messages=USER)
        async with client.messages.stream(model=HAIKU, max_tokens=200, messages=USER) as stream:
            text = "".join([t async for t in stream.text_stream])
        assert text == plain.content[0].text  # type: ignore[union-attr]


def test_openai_chat_plain_stream_parse_tools(record_proxy: ProxyProcess) -> None:
    client = record_proxy.openai()
    plain = client.chat.completions.create(model="gpt-4.1-mini", messages=USER)  # type: ignore[arg-type]
    content = plain.choices[0].message.content
    assert content and plain.usage and plain.usage.prompt_tokens > 0

    chunks = list(
        client.chat.completions.create(
            model="gpt-4.1-mini",
            messages=USER,
            stream=True,  # type: ignore[arg-type]
        )
    )
    assert all(c.usage is None for c in chunks)
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == content
    with_usage = list(
        client.chat.completions.create(
            model="gpt-4.1-mini",
            messages=USER,
            stream=True,  # type: ignore[arg-type]
            stream_options={"include_usage": True},
        )
    )
    assert with_usage[-1].choices == [] and with_usage[-1].usage is not None

    parsed = client.chat.completions.parse(
        model="gpt-4.1",
        messages=USER,
        response_format=Facts,  # type: ignore[arg-type]
    )
    assert isinstance(parsed.choices[0].message.parsed, Facts)

    obj = client.chat.completions.create(
        model="gpt-4.1",
        response_format={"type": "json_object"},
        messages=[{"role": "user", "content": "Reply in json please"}],
    )
    assert isinstance(json.loads(obj.choices[0].message.content or ""), dict)

    fn = {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "w",
            "parameters": WEATHER_TOOL["input_schema"],
        },
    }
    tools = client.chat.completions.create(
        model="gpt-4.1",
        messages=USER,
        tools=[fn],
        tool_choice="required",  # type: ignore[list-item,arg-type]
    )
    call = tools.choices[0].message.tool_calls[0]  # type: ignore[index]
    jsonschema.validate(json.loads(call.function.arguments), WEATHER_TOOL["input_schema"])  # type: ignore[union-attr]

    many = client.chat.completions.create(
        model="gpt-4.1-mini",
        messages=USER,
        n=3,
        logprobs=True,
        top_logprobs=5,  # type: ignore[arg-type]
    )
    assert len(many.choices) == 3
    first = many.choices[0].logprobs.content[0]  # type: ignore[index,union-attr]
    assert first.logprob <= 0 and len(first.top_logprobs) == 5


def test_openai_responses_and_embeddings(record_proxy: ProxyProcess) -> None:
    client = record_proxy.openai()
    plain = client.responses.create(model="gpt-5-mini", input="What do you remember about me?")
    assert plain.output_text
    events = list(
        client.responses.create(model="gpt-5-mini", input="What do you remember?", stream=True)
    )
    assert events[0].type == "response.created" and events[-1].type == "response.completed"
    with client.responses.stream(model="gpt-5-mini", input="What do you remember?") as stream:
        final = stream.get_final_response()
    assert final.output_text
    parsed = client.responses.parse(model="gpt-4.1", input="Facts please", text_format=Facts)
    assert isinstance(parsed.output_parsed, Facts)

    default = client.embeddings.create(model="text-embedding-3-small", input="a lighthouse")
    floats = client.embeddings.create(
        model="text-embedding-3-small", input="a lighthouse", encoding_format="float"
    )
    assert len(default.data[0].embedding) == 1536
    assert default.data[0].embedding == pytest.approx(floats.data[0].embedding, abs=1e-6)
    short = client.embeddings.create(
        model="text-embedding-3-small", input=["a", "b"], dimensions=64
    )
    assert [len(d.embedding) for d in short.data] == [64, 64]
    assert [m.id for m in client.models.list()]


async def test_openai_async(record_proxy: ProxyProcess) -> None:
    async with record_proxy.async_openai() as client:
        plain = await client.chat.completions.create(model="gpt-4.1", messages=USER)  # type: ignore[arg-type]
        stream = await client.chat.completions.create(
            model="gpt-4.1",
            messages=USER,
            stream=True,  # type: ignore[arg-type]
        )
        text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
        assert text == plain.choices[0].message.content
        emb = await client.embeddings.create(model="text-embedding-3-large", input="x")
        assert len(emb.data[0].embedding) == 3072


def test_rerank_routes(record_proxy: ProxyProcess) -> None:
    import httpx

    docs = ["the lighthouse keeper", "a recipe for soup", "lighthouse lamps at night"]
    cohere = httpx.post(
        f"{record_proxy.base}/cohere/v2/rerank",
        json={"model": "rerank-v3.5", "query": "lighthouse", "documents": docs},
    )
    voyage = httpx.post(
        f"{record_proxy.base}/voyage/v1/rerank",
        json={"model": "rerank-2", "query": "lighthouse", "documents": docs},
    )
    assert cohere.status_code == voyage.status_code == 200
    assert cohere.json()["results"][-1]["index"] == 1
    assert voyage.json()["data"][-1]["index"] == 1
