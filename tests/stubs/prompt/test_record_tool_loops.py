"""Agent tool loops in record mode, driven by the official SDKs through a running proxy: with
`tool_choice` unset and two tools offered, the first turn calls the tool that fits with
arguments from the user's words, the second (the result in) answers in text that uses the
result, and the loop ends; plain and streamed, on all three wire formats."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.proxy.proxy_process import ProxyProcess

pytestmark = pytest.mark.integration

HAIKU = "claude-haiku-4-5-20251001"
ASK = "What's the weather like in Paris today?"
RESULT = "Light rain, 14 degrees"
WEATHER_PARAMS = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}},
    "required": ["city", "unit"],
}
TIME_PARAMS = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}
DESCRIPTIONS = {
    "get_weather": "Get the current weather for a city",
    "get_time": "Get the local time in a city",
}
CHAT_TOOLS: Any = [
    {
        "type": "function",
        "function": {"name": n, "description": DESCRIPTIONS[n], "parameters": p},
    }
    for n, p in (("get_time", TIME_PARAMS), ("get_weather", WEATHER_PARAMS))
]
RESPONSES_TOOLS: Any = [{"type": "function", **t["function"]} for t in CHAT_TOOLS]
ANTHROPIC_TOOLS: Any = [
    {"name": n, "description": DESCRIPTIONS[n], "input_schema": p}
    for n, p in (("get_time", TIME_PARAMS), ("get_weather", WEATHER_PARAMS))
]


def _chat_turns(proxy: ProxyProcess, stream: bool, ask: str = ASK, **extra: Any) -> list[Any]:
    """Run the agent loop a framework runs (call, run the tools, call again) until a text
    answer; returns every assistant message. Fails if it does not end within 4 turns."""
    client = proxy.openai()
    messages: list[Any] = [{"role": "system", "content": "You are helpful."}]
    messages.append({"role": "user", "content": ask})
    replies = []
    for _ in range(4):
        if stream:
            with client.chat.completions.stream(
                model="gpt-4o", messages=messages, tools=CHAT_TOOLS, **extra
            ) as s:
                message = s.get_final_completion().choices[0].message
        else:
            message = (
                client.chat.completions.create(
                    model="gpt-4o", messages=messages, tools=CHAT_TOOLS, **extra
                )
                .choices[0]
                .message
            )
        replies.append(message)
        if not message.tool_calls:
            return replies
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            messages.append({"role": "tool", "tool_call_id": call.id, "content": RESULT})
    raise AssertionError(f"the loop did not end: {replies}")


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_chat_completions_loop_calls_the_fitting_tool_then_answers_with_its_result(
    record_proxy: ProxyProcess, stream: bool
) -> None:
    first, second = _chat_turns(record_proxy, stream)
    assert [c.function.name for c in first.tool_calls] == ["get_weather"]
    assert json.loads(first.tool_calls[0].function.arguments)["city"] == "Paris"
    assert second.tool_calls is None and RESULT in second.content


def test_streamed_and_plain_chat_loops_agree(record_proxy: ProxyProcess) -> None:
    plain = _chat_turns(record_proxy, False)
    streamed = _chat_turns(record_proxy, True)

    def calls(message: Any) -> list[tuple[str, str]]:
        return [(c.function.name, c.function.arguments) for c in message.tool_calls]

    assert calls(plain[0]) == calls(streamed[0])
    assert plain[1].content == streamed[1].content


def test_chat_parallel_calls_one_per_question_unless_parallel_calls_are_off(
    record_proxy: ProxyProcess,
) -> None:
    both = "What's the weather in Paris and the local time in Tokyo?"
    first, second = _chat_turns(record_proxy, False, both)
    args = {c.function.name: json.loads(c.function.arguments) for c in first.tool_calls}
    assert args["get_weather"]["city"] == "Paris" and args["get_time"]["city"] == "Tokyo"
    assert second.content.count(RESULT) == 2
    streamed = _chat_turns(record_proxy, True, both)
    assert [(c.function.name, c.function.arguments) for c in streamed[0].tool_calls] == [
        (c.function.name, c.function.arguments) for c in first.tool_calls
    ]
    single = _chat_turns(record_proxy, False, both, parallel_tool_calls=False)
    assert len(single[0].tool_calls) == 1 and len(single) == 2


def test_chat_answers_in_text_when_no_tool_fits_or_tool_choice_is_none(
    record_proxy: ProxyProcess,
) -> None:
    (only,) = _chat_turns(record_proxy, False, "Tell me a joke about penguins.")
    assert only.content and only.tool_calls is None
    (none,) = _chat_turns(record_proxy, False, tool_choice="none")
    assert none.tool_calls is None
    # `required` forces a call on every turn (the client must lift it, as agent frameworks do).
    required = (
        record_proxy.openai()
        .chat.completions.create(
            model="gpt-4o",
            messages=[{"role": "user", "content": "Tell me a joke."}],
            tools=CHAT_TOOLS,
            tool_choice="required",
        )
        .choices[0]
        .message
    )
    assert required.tool_calls is not None and len(required.tool_calls) == 1


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_responses_loop_calls_the_fitting_tool_then_answers_with_its_result(
    record_proxy: ProxyProcess, stream: bool
) -> None:
    client = record_proxy.openai()
    items: list[Any] = [{"role": "user", "content": ASK}]
    outputs = []
    for _ in range(4):
        kwargs: Any = {"model": "gpt-4.1", "input": items, "tools": RESPONSES_TOOLS}
        if stream:
            with client.responses.stream(**kwargs) as s:
                response = s.get_final_response()
        else:
            response = client.responses.create(**kwargs)
        outputs.append(response)
        calls = [o for o in response.output if o.type == "function_call"]
        if not calls:
            break
        for call in calls:
            items.append(
                {
                    "type": "function_call",
                    "call_id": call.call_id,
                    "name": call.name,
                    "arguments": call.arguments,
                }
            )
            output = {"type": "function_call_output", "call_id": call.call_id, "output": RESULT}
            items.append(output)
    assert len(outputs) == 2
    (call,) = [o for o in outputs[0].output if o.type == "function_call"]
    assert call.name == "get_weather" and json.loads(call.arguments)["city"] == "Paris"
    assert RESULT in outputs[1].output_text


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_anthropic_loop_calls_the_fitting_tool_then_answers_with_its_result(
    record_proxy: ProxyProcess, stream: bool
) -> None:
    client = record_proxy.anthropic()
    messages: list[Any] = [
        {"role": "user", "content": "Lena is 34 years old and lives in Porto. Weather there now?"}
    ]
    replies = []
    for _ in range(4):
        kwargs: Any = {
            "model": HAIKU,
            "max_tokens": 400,
            "messages": messages,
            "tools": ANTHROPIC_TOOLS,
        }
        if stream:
            with client.messages.stream(**kwargs) as s:
                message = s.get_final_message()
        else:
            message = client.messages.create(**kwargs)
        replies.append(message)
        uses = [b for b in message.content if b.type == "tool_use"]
        if not uses:
            break
        messages.append({"role": "assistant", "content": [b.model_dump() for b in message.content]})
        messages.append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": b.id, "content": RESULT} for b in uses
                ],
            }
        )
    assert len(replies) == 2
    first, second = replies
    assert first.stop_reason == "tool_use"
    (use,) = [b for b in first.content if b.type == "tool_use"]
    assert use.name == "get_weather" and use.input["city"] == "Porto"  # type: ignore[index]
    assert second.stop_reason == "end_turn"
    assert RESULT in second.content[0].text  # type: ignore[union-attr]
