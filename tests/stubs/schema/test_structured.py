"""Rules answer structured requests on every route (chat json_schema, Responses text.format,
Anthropic output_config.format, forced tool inputs), by schema name; the real SDKs parse them."""

from __future__ import annotations

import json
from pathlib import Path

import anthropic
import httpx2
import openai
import pydantic

from stubs.rules.context import StubContext
from stubs.rules.replies import ReplyBook
from tests.stubs.sdk_transport import StubTransport

RULES = r"""
schema = 1
[[rules]]
name = "city-by-schema"
schema = "City"
[rules.json]
name = "$place"
population = 7
[rules.parts]
place = { regex = 'I live in (\w+)' }

[[rules]]
name = "bad-for-its-schema"
schema = "Strict"
json = { wrong = true }
"""


class City(pydantic.BaseModel):
    name: str
    population: int


class Strict(pydantic.BaseModel):
    when: str
    who: str


def context(tmp_path: Path) -> StubContext:
    path = tmp_path / "stubs.toml"
    path.write_text(RULES)
    return StubContext(book=ReplyBook.load(path))


def openai_client(ctx: StubContext) -> openai.OpenAI:
    transport = StubTransport("openai", ctx)
    return openai.OpenAI(
        api_key="x", base_url="http://stub/v1", http_client=httpx2.Client(transport=transport)
    )


MODEL = "claude-sonnet-4-6"
SAID = "I live in Porto since 2021-03-04 with Ana."


def test_a_rule_answers_responses_parse_by_schema_name(tmp_path: Path) -> None:
    client = openai_client(context(tmp_path))
    parsed = client.responses.parse(model="gpt-4.1", input=SAID, text_format=City).output_parsed
    assert parsed == City(name="Porto", population=7)


def test_a_rule_answers_chat_json_schema_by_name(tmp_path: Path) -> None:
    client = openai_client(context(tmp_path))
    reply = client.chat.completions.parse(
        model="gpt-4.1", messages=[{"role": "user", "content": SAID}], response_format=City
    )
    assert reply.choices[0].message.parsed == City(name="Porto", population=7)


def test_a_rule_answers_a_forced_tool_input_by_tool_name(tmp_path: Path) -> None:
    client = openai_client(context(tmp_path))
    tool = {
        "type": "function",
        "function": {"name": "City", "parameters": City.model_json_schema()},
    }
    reply = client.chat.completions.create(
        model="gpt-4.1",
        messages=[{"role": "user", "content": SAID}],
        tools=[tool],  # type: ignore[list-item]
        tool_choice={"type": "function", "function": {"name": "City"}},
    )
    calls = reply.choices[0].message.tool_calls or []
    assert json.loads(calls[0].function.arguments) == {"name": "Porto", "population": 7}  # type: ignore[union-attr]


def test_anthropic_parse_takes_the_rule_by_schema_title(tmp_path: Path) -> None:
    transport = StubTransport("anthropic", context(tmp_path))
    client = anthropic.Anthropic(
        api_key="x", base_url="http://stub", http_client=httpx2.Client(transport=transport)
    )
    message = client.messages.parse(
        model=MODEL,
        max_tokens=512,
        messages=[{"role": "user", "content": SAID}],
        output_format=City,
    )
    assert message.parsed_output == City(name="Porto", population=7)


def test_a_rule_invalid_for_its_schema_falls_back_to_a_grounded_instance(tmp_path: Path) -> None:
    client = openai_client(context(tmp_path))
    parsed = client.responses.parse(model="gpt-4.1", input=SAID, text_format=Strict).output_parsed
    assert parsed is not None
    assert parsed.when == "2021-03-04T00:00:00Z"  # the request's own date, ISO 8601
    assert parsed.who == "Ana"  # the person the message names: not the place, not a filler
