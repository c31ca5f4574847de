"""Canned replies: by rule first, then by purpose, chosen by the masked request's digest.

A stubs file is TOML (see `default_stubs.toml`): `[replies]` lists replies per purpose, and each
`[[rules]]` entry replies from a template when all its conditions hold. Templates use
`string.Template` syntax ($user, ${system}, $user_json...), so JSON templates keep their braces.

Rules answer structured requests too (chat `response_format` json_schema, Responses
`text.format`, Anthropic `output_config.format`, a forced tool's input): `schema = "Name"` limits a
rule to the schema (or tool) of that name, and a rule's reply is used there when it parses as JSON
valid for the schema; otherwise the stub makes an instance grounded in the request. A rule may
name parts of the prompt (`[rules.parts]`: a markdown section, a tag, a regex group, its sentences
or names) and reply with a `json` template built from them: the language is in stubs.prompt.parts.
"""

from __future__ import annotations

import json
import string
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from stubs.prompt import build_parts, check_part, render_json, string_values, turn_of
from stubs.request import StubRequest
from stubs.rules.delays import DelayRule
from stubs.vectors import MinilmUnavailable, check_available

STUBS_SCHEMA = 1
_RESULT_CHARS = 600  # of each tool result quoted in the answer that uses it


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
    schema_name: str | None = Field(None, alias="schema")
    parts: dict[str, dict[str, Any]] = Field(default_factory=dict)
    reply: str | None = None
    replies: list[str] = Field(default_factory=list)
    json_template: Any = Field(None, alias="json")
    # Whether a reply offered tools calls one (stubs.prompt.tool_policy): "never", "first" (the
    # first
    # tool offered) or a tool's name. A rule may give only this, and no reply.
    tools: str | None = None

    @model_validator(mode="after")
    def _one_reply_source(self) -> Rule:
        given = sum([self.reply is not None, bool(self.replies), self.json_template is not None])
        if given > 1 or (given == 0 and self.tools is None):
            raise ValueError(
                f"rule {self.name!r}: give exactly one of `reply`, `replies`, `json` "
                "(or only `tools`)"
            )
        if self.tools is not None and not self.tools.strip():
            raise ValueError(f'rule {self.name!r}: `tools` is "never", "first" or a tool name')
        for name, spec in self.parts.items():
            check_part(name, spec)
        return self

    @property
    def has_reply(self) -> bool:
        return self.reply is not None or bool(self.replies) or self.json_template is not None

    def templates(self) -> list[str]:
        return [self.reply] if self.reply is not None else self.replies

    def matches(self, req: StubRequest, system: str, user: str, schema: str | None = None) -> bool:
        model = str(req.body.get("model", ""))
        return (
            (self.schema_name is None or self.schema_name == schema)
            and (self.route is None or self.route == req.route)
            and (self.model is None or self.model == model)
            and (self.purpose is None or self.purpose == req.purpose)
            and (self.arm is None or self.arm == req.arm)
            and (self.system_contains is None or self.system_contains in system)
            and (self.user_contains is None or self.user_contains in user)
        )


class EmbeddingsConfig(BaseModel):
    """`[embeddings]`: which record-mode embedder answers /v1/embeddings and rerank
    (stubs.vectors.embeddings)."""

    model_config = ConfigDict(extra="forbid")

    # "static": by meaning, MiniLM's distilled token vectors (the default, stubs.vectors.static);
    # "hash": shared words and word pieces, no model; "minilm": by meaning, all-MiniLM-L6-v2
    # itself from the optional `harness[minilm]` extra (stubs.vectors.minilm).
    model: Literal["static", "hash", "minilm"] = "static"


class StubsFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_: int = Field(STUBS_SCHEMA, alias="schema")
    replies: dict[str, list[str]] = Field(default_factory=dict)
    rules: list[Rule] = Field(default_factory=list)
    delays: list[DelayRule] = Field(default_factory=list)
    embeddings: EmbeddingsConfig = Field(default_factory=EmbeddingsConfig)


def conversation_texts(body: dict[str, Any]) -> tuple[str, str]:
    """(system text, newest user text) of an Anthropic, chat-completions or Responses request:
    a message carrying only tool results is not the user speaking (stubs.prompt.conversation)."""
    turn = turn_of(body)
    return turn.system, turn.user


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
            embeddings=override.embeddings,
        )
        if merged.embeddings.model == "minilm":
            try:
                check_available()  # at start, not on the arm's first embedding call
            except MinilmUnavailable as e:
                raise StubsFileError(f"stubs file {path}: {e}") from None
        return cls(merged)

    def choose(self, req: StubRequest) -> str:
        """The reply text for a conversational request: a pure function of the request. A
        rule answers first; then, once tools have answered the user's newest message, a reply
        that uses their results; then the purpose's canned replies."""
        turn = turn_of(req.body)
        system, user = turn.system, turn.user
        ruled = self._by_rule(req, system, user, None)
        if ruled is not None:
            return ruled
        if turn.results:
            return answer_from_results(turn.results)
        options = self.stubs.replies.get(req.purpose) or self.stubs.replies.get("main") or [""]
        return render(options[req.pick("purpose:" + req.purpose, len(options))], req, system, user)

    def ruled(self, req: StubRequest) -> str | None:
        """A rule's reply for a conversational request, or None when no rule answers it."""
        system, user = conversation_texts(req.body)
        return self._by_rule(req, system, user, None)

    def tool_override(self, req: StubRequest) -> str | None:
        """The `tools` setting of the first rule that matches the request and sets one."""
        system, user = conversation_texts(req.body)
        for rule in self.stubs.rules:
            if rule.tools is not None and rule.matches(req, system, user, None):
                return rule.tools
        return None

    def structured(self, req: StubRequest, schema: str | None) -> str | None:
        """A rule's reply for a structured request whose schema (or tool) is named `schema`, or
        None when no rule matches: the caller then generates a grounded instance."""
        system, user = conversation_texts(req.body)
        return self._by_rule(req, system, user, schema)

    def _by_rule(self, req: StubRequest, system: str, user: str, schema: str | None) -> str | None:
        for rule in self.stubs.rules:
            if rule.has_reply and rule.matches(req, system, user, schema):
                return _render_rule(rule, req, system, user)
        return None


def answer_from_results(results: tuple[str, ...]) -> str:
    """A text answer that uses what the tools returned, as a model's answer after its calls."""
    found = [" ".join(r.split())[:_RESULT_CHARS] for r in results if r.strip()]
    if not found:
        return "The tool returned nothing, so I have no more to add."
    return "Here is what I found: " + "; ".join(found)


def _render_rule(rule: Rule, req: StubRequest, system: str, user: str) -> str:
    # The user's text first: engines state their inputs' headings in the instructions too
    # (mem0's system prompt lists "## New Messages"), and the first match must be the data.
    sources = {"prompt": f"{user}\n{system}" if system else user, "system": system, "user": user}
    parts = build_parts(rule.parts, sources)
    extra = string_values(parts)
    if rule.json_template is not None:
        base = {**_values(req, system, user), **extra}
        value = render_json(rule.json_template, parts, base)
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    templates = rule.templates()
    template = templates[req.pick("rule:" + rule.name, len(templates))]
    return render(template, req, system, user, extra)


def render(
    template: str, req: StubRequest, system: str, user: str, extra: dict[str, str] | None = None
) -> str:
    """Fill a template. Unknown $names are left as written so a typo shows in the output."""
    return string.Template(template).safe_substitute(
        {**_values(req, system, user), **(extra or {})}
    )


def _values(req: StubRequest, system: str, user: str) -> dict[str, str]:
    words = user.split()
    return {
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


def _parse(text: str, where: str) -> StubsFile:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise StubsFileError(f"stubs file {where} is not valid TOML: {e}") from e
    if data.get("schema", STUBS_SCHEMA) != STUBS_SCHEMA:
        raise StubsFileError(
            f"stubs file {where} has schema {data.get('schema')!r}; this harness reads schema "
            f"{STUBS_SCHEMA}. Set `schema = {STUBS_SCHEMA}` and check the format in "
            "docs/record-mode.md."
        )
    try:
        return StubsFile.model_validate(data)
    except ValidationError as e:
        raise StubsFileError(f"stubs file {where} is invalid:\n{e}") from e
