"""stubs.formats.tag_protocols: XML lists and markdown sections filled with the user's
statements."""

from __future__ import annotations

from stubs.formats.tag_protocols import markdown_sections_reply, user_statements, xml_list_reply
from stubs.prompt.conversation import Turn

TEMPLATE = "Extract facts.\nFormat:\n<items>\n  <item>Fact 1</item>\n</items>"


def turn(user: str, earlier: tuple[str, ...] = (), system: str = "") -> Turn:
    return Turn(system, user, earlier, (), ())


def test_the_instruction_message_is_not_a_statement_and_questions_are_not_facts() -> None:
    talk = turn(TEMPLATE, ("I live in Oslo. Where should I eat?", "assistant: Try fish.", "Ok."))
    assert user_statements(talk, TEMPLATE) == ["I live in Oslo."]
    assert xml_list_reply(talk) == "<items>\n  <item>I live in Oslo.</item>\n</items>"


def test_an_empty_list_and_escaped_text() -> None:
    assert xml_list_reply(turn(TEMPLATE, ("Why?",))) == "<items></items>"
    said = turn(TEMPLATE, ("I like <b> & co.",))
    assert xml_list_reply(said) == "<items>\n  <item>I like &lt;b&gt; &amp; co.</item>\n</items>"
    assert xml_list_reply(turn("<a><a>x</a></a>")) is None  # not a list of another tag
    assert xml_list_reply(turn("plain text")) is None
    # A prompt's own instructions in nested tags are not a reply template.
    claude = "<instructions>\n<rule>Be kind.</rule>\n<rule>Be brief.</rule>\n</instructions>"
    assert xml_list_reply(turn("I live in Oslo.", system=claude)) is None


def test_markdown_sections_only_when_asked_for_and_after_the_request() -> None:
    system = "## Context\nnotes\nAnswer with these sections:\n## Summary\n## Next steps"
    reply = markdown_sections_reply(turn("I moved to Oslo. I start work Monday.", system=system))
    assert reply == "## Summary\nI moved to Oslo.\n\n## Next steps\nI start work Monday."
    assert markdown_sections_reply(turn("hi", system="## Context\n## Rules\nBe brief.")) is None
