"""stubs.prompt.said: what the user said, apart from the instructions around it."""

from __future__ import annotations

from stubs.prompt.said import (
    engine_tag_text,
    field_sections,
    json_contents,
    said_text,
    without_assistant,
)

FACT = "My sister lives in Lisbon."


def test_an_engines_message_tag_wins_and_a_prefix_tag_counts() -> None:
    text = f"Instructions here.\n<CURRENT MESSAGE>\nuser: {FACT}\n</CURRENT MESSAGE>"
    assert engine_tag_text(text) == f"user: {FACT}"
    langmem = f"Extract memories. <session_4f0c-11>\n{FACT}\n</session_4f0c-11>"
    assert engine_tag_text(langmem) == FACT
    assert engine_tag_text("<session_x>unclosed") is None


def test_dspy_input_fields_stop_at_its_closing_instruction() -> None:
    closing = "Respond with the corresponding output fields, ..."
    user = f"[[ ## text ## ]]\n{FACT}\n\n[[ ## n ## ]]\n3\n\n{closing}"
    assert field_sections(user) == {"text": FACT, "n": "3"}
    body = {
        "messages": [{"role": "system", "content": "Use tools."}, {"role": "user", "content": user}]
    }
    assert said_text(body, "") == f"{FACT}\n3"


def test_user_messages_newest_first_and_never_the_system_text() -> None:
    body = {
        "messages": [
            {"role": "system", "content": "You are a memory subroutine for an AI."},
            {"role": "user", "content": FACT},
            {"role": "assistant", "content": "Noted."},
            {"role": "user", "content": "Where does she live?"},
        ]
    }
    assert said_text(body, "whole") == f"Where does she live?\n{FACT}"
    assert said_text({"system": "only instructions", "messages": []}, "whole") == "whole"


def test_what_the_assistant_said_is_dropped() -> None:
    lines = f"user: {FACT}\nassistant: I understand. You said: {FACT}\nuser: Thanks."
    assert without_assistant(lines) == f"user: {FACT}\nuser: Thanks."
    banners = (
        "===== Human Message =====\n\nHello there.\n\n"
        "===== Ai Message =====\n\nHi! How can I help?\n"
    )
    assert without_assistant(banners) == "Hello there."


def test_messages_an_engine_lists_as_json_are_read_as_their_text() -> None:
    # graphiti's <MESSAGES>: the earlier episodes as a JSON array, the current one as a string.
    listed = (
        '[{"content": "user: I adopted Waffles.\\nassistant: Lovely.", "timestamp": "2023"}]\n'
        '"user: Waffles loves the beach."'
    )
    assert json_contents(listed) == (
        "user: I adopted Waffles.\nassistant: Lovely.\nuser: Waffles loves the beach."
    )
    body = {"input": [{"role": "user", "content": f"<MESSAGES>\n{listed}\n</MESSAGES>"}]}
    whole = body["input"][0]["content"]
    assert said_text(body, whole) == "user: I adopted Waffles.\nuser: Waffles loves the beach."
    assert json_contents("[not json") is None
    assert json_contents("plain words") is None
