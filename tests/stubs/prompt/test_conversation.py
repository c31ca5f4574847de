"""stubs.prompt.conversation: the newest user message, the tools called since and their results,
read
alike from chat completions, Responses and Anthropic bodies."""

from __future__ import annotations

from stubs.prompt.conversation import turn_of

ASK = "What's the weather in Paris?"


def test_chat_tool_calls_and_results_after_the_newest_user_message() -> None:
    body = {
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello"},
            {"role": "user", "content": [{"type": "text", "text": ASK}]},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "get_weather"}}
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "Sunny"},
        ]
    }
    turn = turn_of(body)
    assert (turn.system, turn.user, turn.earlier_users) == ("Be brief.", ASK, ("Hi",))
    assert (turn.called, turn.results) == (("get_weather",), ("Sunny",))


def test_a_new_user_message_starts_afresh() -> None:
    body = {
        "messages": [
            {"role": "user", "content": ASK},
            {"role": "assistant", "tool_calls": [{"function": {"name": "get_weather"}}]},
            {"role": "tool", "content": "Sunny"},
            {"role": "assistant", "content": "It is sunny."},
            {"role": "user", "content": "And tomorrow?"},
        ]
    }
    turn = turn_of(body)
    assert (turn.user, turn.called, turn.results) == ("And tomorrow?", (), ())


def test_responses_items_and_instructions() -> None:
    body = {
        "instructions": "Use tools.",
        "input": [
            {"role": "user", "content": [{"type": "input_text", "text": ASK}]},
            {"type": "function_call", "name": "get_weather", "call_id": "c", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c", "output": "Rain"},
        ],
    }
    turn = turn_of(body)
    assert (turn.system, turn.user, turn.called, turn.results) == (
        "Use tools.",
        ASK,
        ("get_weather",),
        ("Rain",),
    )
    assert turn_of({"input": ASK}).user == ASK


def test_anthropic_tool_results_ride_in_a_user_message_that_is_not_the_user_speaking() -> None:
    body = {
        "system": [{"type": "text", "text": "Be brief."}],
        "messages": [
            {"role": "user", "content": ASK},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t", "name": "get_weather", "input": {}}],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t",
                        "content": [{"type": "text", "text": "Fog"}],
                    }
                ],
            },
        ],
    }
    turn = turn_of(body)
    assert (turn.system, turn.user, turn.called, turn.results) == (
        "Be brief.",
        ASK,
        ("get_weather",),
        ("Fog",),
    )


def test_hostile_shapes_are_ignored_not_fatal() -> None:
    body = {"messages": [None, 3, {"role": "assistant", "tool_calls": [None, {"function": 1}]}]}
    turn = turn_of(body)
    assert (turn.user, turn.called, turn.results) == ("", (), ())
    assert turn_of({"messages": "x", "system": 5}).user == "x"
