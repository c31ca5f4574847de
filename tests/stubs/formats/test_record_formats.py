"""The output format a prompt asks for, answered with values grounded in the user's words, through
a running record proxy with the official SDKs: json_object of a described shape, dspy's field
markers (ReAct included), llama-index's XML facts, markdown sections, langmem's memory call,
typed structured output; and a stubs file's `tools` rule."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anthropic
import jsonschema
import pydantic
import pytest

from tests.proxy.proxy_process import ProxyProcess

pytestmark = pytest.mark.integration

LENA = "Lena is 34 years old and lives in Porto."
HAIKU = "claude-haiku-4-5-20251001"
# instructor's JSON mode (1.x) puts the model's schema in the system message.
INSTRUCTOR_SYSTEM = (
    "As a genius expert, your task is to understand the content and provide the parsed objects "
    "in json that match the following json_schema:\n\n"
    + json.dumps(
        {
            "properties": {
                "name": {"title": "Name", "type": "string"},
                "age": {"title": "Age", "type": "integer"},
                "city": {"title": "City", "type": "string"},
            },
            "required": ["name", "age", "city"],
            "title": "Person",
            "type": "object",
        },
        indent=2,
    )
    + "\n\nMake sure to return an instance of the JSON, not the schema itself"
)
# dspy 3.4's ChatAdapter, for `text -> name, age: int, city` (its words, trimmed of nothing).
DSPY_SYSTEM = """Your input fields are:
1. `text` (str):
Your output fields are:
1. `name` (str):
2. `age` (int):
3. `city` (str):
All interactions will be structured in the following way, with the appropriate values filled in.

[[ ## text ## ]]
{text}

[[ ## name ## ]]
{name}

[[ ## age ## ]]
{age}        # note: the value you produce must be a single int value

[[ ## city ## ]]
{city}

[[ ## completed ## ]]
In adhering to this structure, your objective is:
        Extract the person."""
DSPY_USER = f"""[[ ## text ## ]]
{LENA}

Respond with the corresponding output fields, starting with the field `[[ ## name ## ]]`, then \
`[[ ## age ## ]]` (must be formatted as a valid Python int), then `[[ ## city ## ]]`, and then \
ending with the marker for `[[ ## completed ## ]]`."""
REACT_SYSTEM = """Your input fields are:
1. `question` (str):
2. `trajectory` (str):
Your output fields are:
1. `next_thought` (str):
2. `next_tool_name` (Literal['get_time', 'get_weather', 'finish']):
3. `next_tool_args` (dict[str, Any]):
All interactions will be structured in the following way, with the appropriate values filled in.

[[ ## next_tool_name ## ]]
{next_tool_name}        # note: the value you produce must exactly match (no extra characters) \
one of: get_time; get_weather; finish

[[ ## completed ## ]]
In adhering to this structure, your objective is:
        (1) get_time, whose description is <desc>Get the local time in a city.</desc>. It takes \
arguments {'city': {'type': 'string'}}.
        (2) get_weather, whose description is <desc>Get the weather for a city.</desc>. It takes \
arguments {'city': {'type': 'string'}}.
        (3) finish, whose description is <desc>Marks the task as complete.</desc>. It takes \
arguments {}.
        When providing `next_tool_args`, the value inside the field must be in JSON format"""
REACT_USER = """[[ ## question ## ]]
What is the weather in Oslo?

[[ ## trajectory ## ]]
{trajectory}
Respond with the corresponding output fields, starting with the field `[[ ## next_thought ## ]]`, \
then `[[ ## next_tool_name ## ]]`, then `[[ ## next_tool_args ## ]]`, and then ending with the \
marker for `[[ ## completed ## ]]`."""
OBSERVED = """[[ ## thought_0 ## ]]
I should call get_weather.

[[ ## tool_name_0 ## ]]
get_weather

[[ ## tool_args_0 ## ]]
{"city": "Oslo"}

[[ ## observation_0 ## ]]
Snow, -3 C
"""
# llama-index 0.12's FactExtractionMemoryBlock: its prompt is the newest user message, after the
# conversation it extracts from.
FACTS_PROMPT = """You are a precise fact extraction system designed to identify key information \
from conversations.

INSTRUCTIONS:
1. Review the conversation segment provided prior to this message
2. Extract specific, concrete facts the user has disclosed or important information discovered

<existing_facts>
</existing_facts>

Return ONLY the extracted facts in this exact format:
<facts>
  <fact>Specific fact 1</fact>
  <fact>Specific fact 2</fact>
  <!-- More facts as needed -->
</facts>

If no new facts are present, return: <facts></facts>"""


def chat(proxy: ProxyProcess, system: str, user: Any, **extra: Any) -> str:
    messages = [{"role": "system", "content": system}]
    messages += user if isinstance(user, list) else [{"role": "user", "content": user}]
    reply = proxy.openai().chat.completions.create(model="gpt-4o", messages=messages, **extra)
    content = reply.choices[0].message.content
    assert content is not None
    return content


def test_json_object_takes_the_shape_the_prompt_describes(record_proxy: ProxyProcess) -> None:
    as_json: Any = {"type": "json_object"}
    person = {"name": "Lena", "age": 34, "city": "Porto"}
    assert (
        json.loads(chat(record_proxy, INSTRUCTOR_SYSTEM, LENA, response_format=as_json)) == person
    )
    listed = "Reply in JSON with the keys `name`, `age` and `city`."
    assert json.loads(chat(record_proxy, listed, LENA, response_format=as_json)) == person
    example = 'Return JSON like {"name": "...", "age": 0, "hobbies": ["..."]}'
    said = LENA + " She loves sailing."
    value = json.loads(chat(record_proxy, example, said, response_format=as_json))
    assert (value["name"], value["age"]) == ("Lena", 34)
    assert value["hobbies"] and all(h in said for h in value["hobbies"])
    # No shape described: still an object, wrapping the text.
    plain = json.loads(chat(record_proxy, "Answer in json.", LENA, response_format=as_json))
    assert list(plain) == ["response"]


def test_dspy_field_markers_are_answered_in_the_protocol(record_proxy: ProxyProcess) -> None:
    text = chat(record_proxy, DSPY_SYSTEM, DSPY_USER)
    assert text == (
        "[[ ## name ## ]]\nLena\n\n[[ ## age ## ]]\n34\n\n[[ ## city ## ]]\nPorto\n\n"
        "[[ ## completed ## ]]"
    )


def test_dspy_react_calls_the_fitting_tool_then_finishes(record_proxy: ProxyProcess) -> None:
    first = chat(record_proxy, REACT_SYSTEM, REACT_USER.format(trajectory=""))
    assert "[[ ## next_tool_name ## ]]\nget_weather\n" in first
    assert '[[ ## next_tool_args ## ]]\n{"city": "Oslo"}\n' in first
    assert first.endswith("[[ ## completed ## ]]")
    done = chat(record_proxy, REACT_SYSTEM, REACT_USER.format(trajectory=OBSERVED))
    assert "[[ ## next_tool_name ## ]]\nfinish\n" in done
    assert "[[ ## next_tool_args ## ]]\n{}\n" in done


def test_xml_fact_extraction_lists_the_users_statements(record_proxy: ProxyProcess) -> None:
    conversation = [
        {"role": "user", "content": "My sister lives in Lisbon. What should I cook tonight?"},
        {"role": "assistant", "content": "You said: maybe pasta."},
        {"role": "user", "content": "I am allergic to peanuts."},
        {"role": "user", "content": FACTS_PROMPT},
    ]
    text = chat(record_proxy, "You are helpful.", conversation)
    assert text == (
        "<facts>\n  <fact>My sister lives in Lisbon.</fact>\n"
        "  <fact>I am allergic to peanuts.</fact>\n</facts>"
    )


def test_markdown_sections_are_answered_under_their_headings(record_proxy: ProxyProcess) -> None:
    system = "Summarize the message. Respond using the following sections:\n\n## Summary\n## Facts"
    text = chat(record_proxy, system, LENA + " She loves sailing.")
    assert text == f"## Summary\n{LENA}\n\n## Facts\nShe loves sailing."


class Person(pydantic.BaseModel):
    name: str
    age: int
    city: str


def test_typed_output_and_tool_inputs_are_grounded(record_proxy: ProxyProcess) -> None:
    parsed = (
        record_proxy.openai()
        .chat.completions.parse(
            model="gpt-4o",
            messages=[
                {"role": "system", "content": "Extract the Person. Use tools."},
                {"role": "user", "content": LENA},
            ],
            response_format=Person,
        )
        .choices[0]
        .message.parsed
    )
    assert parsed == Person(name="Lena", age=34, city="Porto")
    message = record_proxy.anthropic().messages.parse(
        model=HAIKU,
        max_tokens=500,
        messages=[{"role": "user", "content": LENA}],
        output_format=Person,
    )
    assert message.parsed_output == Person(name="Lena", age=34, city="Porto")
    # zod's int bounds (+-2**53) must not give an absurd age; the text's number is taken.
    zod = {"type": "integer", "minimum": -9007199254740991, "maximum": 9007199254740991}
    tool = {
        "name": "save_person",
        "description": "Save a person",
        "input_schema": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "age": zod, "city": {"type": "string"}},
            "required": ["name", "age", "city"],
        },
    }
    reply = record_proxy.anthropic().messages.create(
        model=HAIKU,
        max_tokens=500,
        system="Use tools.",
        messages=[{"role": "user", "content": LENA}],
        tools=[tool],  # type: ignore[list-item]
        tool_choice={"type": "any"},
    )
    (use,) = [b for b in reply.content if b.type == "tool_use"]
    assert use.input == {"name": "Lena", "age": 34, "city": "Porto"}


PERSON_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer"},
        "city": {"type": "string"},
    },
    "required": ["name", "age", "city"],
    "additionalProperties": False,
}


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
def test_top_level_output_format_is_answered_with_grounded_json(
    record_proxy: ProxyProcess, stream: bool
) -> None:
    # The structured-outputs beta's top-level field, as litellm sends it (the SDK's create()
    # no longer names it, so it goes through extra_body with the beta header).
    fmt = {"type": "json_schema", "schema": PERSON_SCHEMA}
    request: Any = {
        "model": HAIKU,
        "max_tokens": 500,
        "messages": [{"role": "user", "content": LENA}],
        "extra_body": {"output_format": fmt},
        "extra_headers": {"anthropic-beta": "structured-outputs-2025-11-13"},
    }
    client = record_proxy.anthropic()
    if stream:
        with client.messages.stream(**request) as events:
            message = events.get_final_message()
    else:
        message = client.messages.create(**request)
    (block,) = message.content
    assert block.type == "text"
    value = json.loads(block.text)
    jsonschema.validate(value, PERSON_SCHEMA)
    assert value == {"name": "Lena", "age": 34, "city": "Porto"}


def test_output_format_with_output_config_format_is_refused(record_proxy: ProxyProcess) -> None:
    fmt = {"type": "json_schema", "schema": PERSON_SCHEMA}
    with pytest.raises(anthropic.BadRequestError, match="Both output_format and output_config"):
        record_proxy.anthropic().messages.create(
            model=HAIKU,
            max_tokens=500,
            messages=[{"role": "user", "content": LENA}],
            output_config={"format": fmt},  # type: ignore[typeddict-item]
            extra_body={"output_format": fmt},
        )
    with pytest.raises(anthropic.BadRequestError, match=r"output_format\.type"):
        record_proxy.anthropic().messages.create(
            model=HAIKU,
            max_tokens=500,
            messages=[{"role": "user", "content": LENA}],
            extra_body={"output_format": {"type": "text"}},
        )


def test_langmem_memory_call_stores_the_users_words_not_the_instructions(
    record_proxy: ProxyProcess,
) -> None:
    # langmem 0.0.30's memory manager: a system line, its instructions, the session in a tag
    # named with a uuid, and a forced call of its `Memory` tool.
    session = (
        "<session_4f0c9a1e-1111-4a2b-9c3d-0123456789ab>\n"
        "================================ Human Message =================================\n\n"
        "Remember that my sister lives in Lisbon.\n\n"
        "================================== Ai Message ==================================\n\n"
        "I understand. You said: Remember that my sister lives in Lisbon.\n"
        "</session_4f0c9a1e-1111-4a2b-9c3d-0123456789ab>"
    )
    tools: Any = [
        {
            "type": "function",
            "function": {
                "name": "Memory",
                "description": "Call this tool once for each new memory you want to record.",
                "parameters": {
                    "type": "object",
                    "properties": {"content": {"type": "string"}},
                    "required": ["content"],
                },
            },
        }
    ]
    reply = record_proxy.openai().chat.completions.create(
        model="gpt-4o",
        messages=[
            {"role": "system", "content": "You are a memory subroutine for an AI."},
            {
                "role": "user",
                "content": "You are a long-term memory manager. Extract & Contextualize. "
                f"All operations must be done in single parallel multi-tool call. {session}",
            },
        ],
        tools=tools,
        tool_choice="required",
    )
    (call,) = reply.choices[0].message.tool_calls or []
    content = json.loads(call.function.arguments)["content"]  # type: ignore[union-attr]
    assert content == "My sister lives in Lisbon."  # the fact, as a short sentence


def test_a_stubs_rule_overrides_the_tool_policy(tmp_path: Path) -> None:
    stubs = tmp_path / "stubs.toml"
    stubs.write_text(
        'schema = 1\n[[rules]]\nname = "no-tools"\nuser_contains = "Paris"\ntools = "never"\n'
        '[[rules]]\nname = "time-always"\nuser_contains = "joke"\ntools = "get_time"\n'
    )
    proxy = ProxyProcess(tmp_path / "run", "--stubs", str(stubs))
    try:
        tools: Any = [
            {"type": "function", "function": {"name": n, "description": d, "parameters": {}}}
            for n, d in (("get_weather", "Weather for a city"), ("get_time", "Time in a city"))
        ]

        def calls(user: str) -> list[str]:
            message = (
                proxy.openai()
                .chat.completions.create(
                    model="gpt-4o", messages=[{"role": "user", "content": user}], tools=tools
                )
                .choices[0]
                .message
            )
            return [c.function.name for c in message.tool_calls or []]  # type: ignore[union-attr]

        assert calls("What's the weather in Paris?") == []
        assert calls("Tell me a joke.") == ["get_time"]
        assert calls("What's the weather in Rome?") == ["get_weather"]
    finally:
        proxy.stop()
