"""The record-mode reply logic against what a hostile or careless arm can send: huge texts, runs
of one character, broken markers and JSON. Each must answer quickly (every scan is bounded) and
never crash, since the text is the arm's."""

from __future__ import annotations

import time

import pytest

from stubs.formats.dspy_protocol import dspy_reply
from stubs.formats.tag_protocols import markdown_sections_reply, xml_list_reply
from stubs.prompt.conversation import Turn, turn_of
from stubs.prompt.grounding import grounding_from
from stubs.prompt.said import said_text
from stubs.prompt.tool_policy import OfferedTool, tools_to_call
from stubs.schema.json_shape import described_schema

HOSTILE = [
    " " * 100_000,
    "\n" * 100_000,
    "{" * 100_000,
    '{"a": ' * 20_000,
    '{"a": [' * 20_000,
    ("x {" + "a" * 100) * 1000,
    "and " * 25_000,
    ". " * 100_000,
    "<facts>" * 20_000,
    "[[ ## a ## ]]\n" * 20_000,
    "# note: " * 20_000,
    "1" * 100_000,
    "Use " * 25_000,
    "=" * 100_000,
    "user: " * 20_000,
]
TOOLS = [OfferedTool("get_weather", "Get the weather. " * 200), OfferedTool("get_time", "x")]
LIMIT_S = 2.0  # CPU seconds (a busy machine does not count); each case takes under 0.5 s


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_every_scan_is_bounded_and_nothing_crashes(text: str) -> None:
    started = time.process_time()
    turn = Turn(
        system=text + "[[ ## completed ## ]]",
        user=text,
        earlier_users=(text,),
        called=(),
        results=(),
    )
    tools_to_call(TOOLS, "auto", turn, parallel=True)
    described_schema(text)
    dspy_reply(turn, b"d" * 32)
    xml_list_reply(turn)
    markdown_sections_reply(turn)
    grounding_from(text, text)
    body = {"messages": [{"role": "system", "content": text}, {"role": "user", "content": text}]}
    said_text(body, text)
    turn_of(body)
    assert time.process_time() - started < LIMIT_S


def test_broken_protocols_fall_back_without_raising() -> None:
    broken_react = Turn(
        system="[[ ## completed ## ]]\nYour output fields are:\n1. `next_tool_name` (str):\n"
        "All interactions\n(1) t, whose description is <desc>d</desc>. It takes arguments "
        "{'a': {'type': 'nope'}}.",
        user="[[ ## question ## ]]\nhi",
        earlier_users=(),
        called=(),
        results=(),
    )
    assert dspy_reply(broken_react, b"d" * 32) is not None
    assert described_schema('{"properties": {"a": 1}, "type": "array"}') is None
    assert described_schema("no json here") is None
