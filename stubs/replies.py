"""Canned replies: by rule first, then by purpose, chosen by the masked request's digest.

A stubs file is TOML (see `default_stubs.toml`): `[replies]` lists replies per purpose, and each
`[[rules]]` entry replies from a template when all its conditions hold. Templates use
`string.Template` syntax ($user, ${system}, $user_json...), so JSON templates keep their braces.
"""

from __future__ import annotations

import json
import string
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from stubs.delays import DelayRule
from stubs.request import StubRequest

STUBS_SCHEMA = 1


class StubsFileError(ValueError):
    """A stubs file that cannot be used; the message says which file and what to fix."""


class Rule(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    route: str | None = None
    model: str | None = None
    purpose: str | None = None
    arm: str | None = None
    system_contains: str | None = None
    user_contains: str | None = None
    reply: str | None = None
    replies: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _one_reply_source(self) -> Rule:
        if (self.reply is None) == (not self.replies):
            raise ValueError(f"rule {self.name!r}: give exactly one of `reply` or `replies`")
        return self

    def templates(self) -> list[str]:
        return [self.reply] if self.reply is not None else self.replies

    def matches(self, req: StubRequest, system: str, user: str) -> bool:
        model = str(req.body.get("model", ""))
        return (
            (self.route is None or self.route == req.route)
            and (self.model is None or self.model == model)
            and (self.purpose is None or self.purpose == req.purpose)
            and (self.arm is None or self.arm == req.arm)
            and (self.system_contains is None or self.system_contains in system)
            and (self.user_contains is None or self.user_contains in user)
        )


class StubsFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_: int = Field(STUBS_SCHEMA, alias="schema")
    replies: dict[str, list[str]] = Field(default_factory=dict)
    rules: list[Rule] = Field(default_factory=list)
    delays: list[DelayRule] = Field(default_factory=list)


def _text_of_content(content: Any) -> str:
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


def conversation_texts(body: dict[str, Any]) -> tuple[str, str]:
    """(system text, last user text) of an Anthropic, chat-completions or Responses request."""
    system_parts: list[str] = []
    user = ""
    if "system" in body:
        system_parts.append(_text_of_content(body["system"]))
    if isinstance(body.get("instructions"), str):
        system_parts.append(body["instructions"])
    messages = body.get("messages")
    if messages is None:
        messages = body.get("input")
    if isinstance(messages, str):
        user = messages
    elif isinstance(messages, list):
        for msg in messages:
            if not isinstance(msg, dict):
                continue
            role = msg.get("role")
            text = _text_of_content(msg.get("content"))
            if role in ("system", "developer"):
                system_parts.append(text)
            elif role == "user":
                user = text
    return "\n".join(p for p in system_parts if p), user


class ReplyBook:
    """The replies a stub may give, loaded from the default stubs file and the study's overrides."""

    def __init__(self, stubs: StubsFile) -> None:
        self.stubs = stubs

    @classmethod
    def default(cls) -> ReplyBook:
        text = resources.files("stubs").joinpath("default_stubs.toml").read_text("utf-8")
        return cls(_parse(text, "default_stubs.toml"))

    @classmethod
    def load(cls, path: Path | None) -> ReplyBook:
        """The default book, with the study's file layered on top: its rules come first and its
        purposes replace the default lists."""
        book = cls.default()
        if path is None:
            return book
        try:
            text = path.read_text("utf-8")
        except OSError as e:
            raise StubsFileError(f"cannot read stubs file {path}: {e.strerror}") from e
        override = _parse(text, str(path))
        merged = StubsFile(
            schema=STUBS_SCHEMA,
            replies={**book.stubs.replies, **override.replies},
            rules=[*override.rules, *book.stubs.rules],
            delays=[*override.delays, *book.stubs.delays],
        )
        return cls(merged)

    def choose(self, req: StubRequest) -> str:
        """The reply text for a conversational request: a pure function of the request."""
        system, user = conversation_texts(req.body)
        for rule in self.stubs.rules:
            if rule.matches(req, system, user):
                templates = rule.templates()
                template = templates[req.pick("rule:" + rule.name, len(templates))]
                return render(template, req, system, user)
        options = self.stubs.replies.get(req.purpose) or self.stubs.replies.get("main") or [""]
        return render(options[req.pick("purpose:" + req.purpose, len(options))], req, system, user)


def render(template: str, req: StubRequest, system: str, user: str) -> str:
    """Fill a template. Unknown $names are left as written so a typo shows in the output."""
    words = user.split()
    values = {
        "user": user,
        "user_json": json.dumps(user)[1:-1],
        "user_first_words": " ".join(words[:12]),
        "system": system,
        "system_json": json.dumps(system)[1:-1],
        "model": str(req.body.get("model", "")),
        "purpose": req.purpose,
        "route": req.route,
        "arm": req.arm or "",
        "digest": req.digest.hex()[:12],
    }
    return string.Template(template).safe_substitute(values)


def _parse(text: str, where: str) -> StubsFile:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise StubsFileError(f"stubs file {where} is not valid TOML: {e}") from e
    if data.get("schema", STUBS_SCHEMA) != STUBS_SCHEMA:
        raise StubsFileError(
            f"stubs file {where} has schema {data.get('schema')!r}; this harness reads schema "
            f"{STUBS_SCHEMA}. Set `schema = {STUBS_SCHEMA}` and check the format in the README."
        )
    try:
        return StubsFile.model_validate(data)
    except ValidationError as e:
        raise StubsFileError(f"stubs file {where} is invalid:\n{e}") from e
