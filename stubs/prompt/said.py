"""What the user said in a request, apart from the instructions wrapped around it.

A model answers from the conversation's content; its instructions ("You are a memory
subroutine for an AI.", "Use tools.", dspy's "Respond with the corresponding output fields")
are not facts about the user. Engines and frameworks put the content in different places, tried
in this order:
- an engine's message tag (graphiti's <CURRENT MESSAGE>, langmem's <session_...>, <MESSAGES>);
- dspy's input fields, the `[[ ## name ## ]]` sections of the newest user message;
- the user's own messages, the newest first (the one a reply answers), then the earlier ones.
Inside that text, lines an assistant spoke ("assistant: ...", langmem's "== Ai Message ==") are
dropped: what the assistant said is not what the user told it. Pure functions of their input.
"""

from __future__ import annotations

import json
import re
from typing import Any

from stubs.prompt.conversation import turn_of

# Tags an engine puts around what the user said, most specific first; a tag whose name starts
# with one of the prefixes counts too (langmem writes <session_{uuid}>).
_MESSAGE_TAGS = ("CURRENT MESSAGE", "CURRENT_MESSAGE", "MESSAGES", "EPISODE", "TEXT", "FACT")
_TAG_PREFIXES = ("session", "conversation", "chat_history", "transcript", "dialog", "dialogue")
_OPEN_TAG_RE = re.compile(r"<([A-Za-z][\w-]{0,80})>")
_FIELD_RE = re.compile(r"^\[\[ ## (\w{1,80}) ## \]\][ \t]*$", re.M)
_DSPY_CLOSING = "Respond with the corresponding output fields"
_ASSISTANT = frozenset(("assistant", "ai", "bot", "model", "system", "tool", "agent"))
_SPEAKER_LINE_RE = re.compile(r"^[ \t]{0,4}([\w .'-]{1,40}):[ \t]", re.M)
_BANNER_RE = re.compile(r"^=+ *(\w[\w ]{0,30}?) Message *=+$", re.M)
# Keys whose string is a message's text in an engine's JSON listing of messages.
_CONTENT_KEYS = frozenset(("content", "text", "message", "episode_body", "body"))
_DECODER = json.JSONDecoder()
# Only this much of a request is read: a 32 MiB body costs no more than 1 MiB.
MAX_TEXT = 1 << 20


def tag_text(text: str, tag: str) -> str | None:
    """The text between the first `<tag>` and the `</tag>` after it, or None."""
    start = text.find(f"<{tag}>")
    if start < 0:
        return None
    start += len(tag) + 2
    end = text.find(f"</{tag}>", start)
    return text[start:end].strip() if end >= 0 else None


def engine_tag_text(text: str) -> str | None:
    """The body of the message tag an engine wraps the user's words in, or None."""
    for tag in _MESSAGE_TAGS:
        found = tag_text(text, tag)
        if found not in (None, "", "[]"):
            return found
    for match in _OPEN_TAG_RE.finditer(text):
        name = match.group(1)
        if name.lower().startswith(_TAG_PREFIXES):
            found = tag_text(text[match.start() :], name)
            if found:
                return found
    return None


def json_contents(text: str) -> str | None:
    """The messages' own text when a tag holds them as JSON (graphiti's <MESSAGES> is a list
    of {"content": "user: ...\\nassistant: ..."} records), one a line; else None. Read as raw
    text, the escaped newlines glued a whole session into one "sentence" that began with the
    JSON's own punctuation, and a summary made of it outgrew the caller's output limit."""
    if not text.startswith(("[", "{")):
        return None
    found: list[str] = []
    at = 0
    # Several values one after another: graphiti lists the earlier episodes as a JSON array,
    # then the current one as a JSON string on the next line.
    while at < len(text):
        try:
            value, at = _DECODER.raw_decode(text, at)
        except ValueError:
            return None
        if isinstance(value, str):
            found.append(value)  # a message given as a bare JSON string
        else:
            _collect_contents(value, found)
        while at < len(text) and text[at].isspace():
            at += 1
    return "\n".join(found) if found else None


def _collect_contents(value: Any, found: list[str]) -> None:
    if isinstance(value, list):
        for item in value:
            _collect_contents(item, found)
    elif isinstance(value, dict):
        for key, item in value.items():
            if key in _CONTENT_KEYS and isinstance(item, str):
                found.append(item)
            else:
                _collect_contents(item, found)


def field_sections(text: str) -> dict[str, str]:
    """dspy's `[[ ## name ## ]]` sections: each marker's text up to the next marker (the last
    one up to dspy's closing instruction, "Respond with the corresponding output fields...")."""
    closing = text.rfind(_DSPY_CLOSING)
    text = text[:closing] if closing >= 0 else text
    marks = list(_FIELD_RE.finditer(text))
    out: dict[str, str] = {}
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        out.setdefault(mark.group(1), text[mark.end() : end].strip())
    return out


def without_assistant(text: str) -> str:
    """`text` without what an assistant said, when its lines or sections name their speaker."""
    banners = list(_BANNER_RE.finditer(text))
    if banners:
        kept = []
        for i, banner in enumerate(banners):
            end = banners[i + 1].start() if i + 1 < len(banners) else len(text)
            if banner.group(1).strip().lower() not in _ASSISTANT:
                kept.append(text[banner.end() : end].strip())
        return "\n".join(kept)
    lines = text.split("\n")
    speaker: str | None = None
    kept_lines = []
    for line in lines:
        found = _SPEAKER_LINE_RE.match(line)
        if found:
            speaker = found.group(1).strip().lower()
        if speaker not in _ASSISTANT:
            kept_lines.append(line)
    return "\n".join(kept_lines)


def said_text(body: dict[str, Any], whole: str) -> str:
    """What the user said in `body` (`whole` is all of its text, system included)."""
    tagged = engine_tag_text(whole)
    if tagged is not None:
        return without_assistant(json_contents(tagged) or tagged)[:MAX_TEXT]
    turn = turn_of(body)
    fields = {k: v for k, v in field_sections(turn.user).items() if v}
    if fields:
        return "\n".join(fields.values())[:MAX_TEXT]
    users = [u for u in (turn.user, *reversed(turn.earlier_users)) if u.strip()]
    if users:
        return without_assistant("\n".join(users))[:MAX_TEXT]
    return whole
