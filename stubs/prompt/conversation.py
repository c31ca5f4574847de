"""Where a conversation stands, read the same way from all three wire formats.

The stub's tool policy needs to know three things of a request: what the newest user message
says, which tools were called since it, and what those calls returned. The wire formats say it
differently: chat completions puts calls in an assistant message's `tool_calls` and results in
`role: "tool"` messages; Responses has `function_call` and `function_call_output` items; Anthropic
puts `tool_use` blocks in assistant messages and `tool_result` blocks in a *user* message, which
is therefore not the user speaking. Everything here is a pure function of the request body.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

_CALL_ITEMS = ("function_call", "custom_tool_call")
_RESULT_ITEMS = ("function_call_output", "custom_tool_call_output")


@dataclass(frozen=True)
class Turn:
    system: str  # system, developer and `instructions` texts, joined
    user: str  # the newest message the user wrote ("" when there is none)
    earlier_users: tuple[str, ...]  # the user's earlier messages, oldest first
    called: tuple[str, ...]  # tools called since the newest user message, in order
    results: tuple[str, ...]  # what those calls returned, in order


def content_text(content: Any) -> str:
    """The text of a message's content: a string, or the text of its text blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and isinstance(block.get("text"), str):
                parts.append(block["text"])
        return "\n".join(parts)
    return ""


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            content_text(b.get("content")) if b.get("type") == "tool_result" else content_text([b])
            for b in content
            if isinstance(b, dict)
        )
    return content_text(content)


class _Reader:
    def __init__(self) -> None:
        self.system: list[str] = []
        self.users: list[str] = []
        self.called: list[str] = []
        self.results: list[str] = []

    def user(self, text: str) -> None:
        self.users.append(text)
        self.called, self.results = [], []

    def item(self, item: dict[str, Any]) -> None:
        kind, role = item.get("type"), item.get("role")
        if kind in _CALL_ITEMS and isinstance(item.get("name"), str):
            self.called.append(item["name"])
        elif kind in _RESULT_ITEMS:
            self.results.append(_result_text(item.get("output")))
        elif role in ("system", "developer"):
            self.system.append(content_text(item.get("content")))
        elif role == "user":
            self._user_message(item.get("content"))
        elif role == "assistant":
            self._assistant_message(item)
        elif role in ("tool", "function"):
            self.results.append(_result_text(item.get("content")))

    def _user_message(self, content: Any) -> None:
        blocks = content if isinstance(content, list) else []
        results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
        if results:
            # Anthropic's tool results ride in a user message (a text beside them is a note on
            # the results, such as "continue"): the user has not asked anything new.
            self.results.extend(_result_text(b.get("content")) for b in results)
            return
        self.user(content_text(content))

    def _assistant_message(self, message: dict[str, Any]) -> None:
        for call in message.get("tool_calls") or []:
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict) and isinstance(function.get("name"), str):
                self.called.append(function["name"])
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                self.called.append(str(block.get("name")))


def turn_of(body: dict[str, Any]) -> Turn:
    """The conversation's state in a chat-completions, Responses or Anthropic request body."""
    reader = _Reader()
    if "system" in body:
        reader.system.append(content_text(body["system"]))
    if isinstance(body.get("instructions"), str):
        reader.system.append(body["instructions"])
    messages = body.get("messages")
    if messages is None:
        messages = body.get("input")
    if isinstance(messages, str):
        reader.user(messages)
    elif isinstance(messages, list):
        for item in messages:
            if isinstance(item, dict):
                reader.item(item)
    users = reader.users
    return Turn(
        system="\n".join(p for p in reader.system if p),
        user=users[-1] if users else "",
        earlier_users=tuple(users[:-1]),
        called=tuple(reader.called),
        results=tuple(reader.results),
    )
