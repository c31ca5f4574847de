"""Whether a record-mode reply calls a tool, and which: decided from the request alone.

Agent frameworks offer tools and leave `tool_choice` unset; a stub that calls a tool only when
forced never runs their loop. The policy, for a `tool_choice` that allows a call (unset, `auto`,
Anthropic's `any`, OpenAI's `required`):
- while the newest user message has no tool result after it, call the tool that fits it: the
  one whose name and description are most similar to the user's words by the record-mode
  embedder (over its FIT_THRESHOLDS entry), or one the prompt names, or the best one when the
  instructions say to use tools; `required`/`any` always call the best tool;
- once a result is in, answer in text (stubs.rules.replies uses the result) unless the result names
  another offered tool, which is then called: each tool at most once per user message, so no
  agent loops forever on a stub;
- with parallel calls allowed, each clause of the message that a tool fits gets its own call;
- a stubs rule's `tools = "never" | "first" | "<name>"` overrides all of this.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from stubs.prompt.conversation import Turn
from stubs.vectors import embed_texts

Choice = Literal["auto", "required"]

# Cosine over content words at which a tool fits the user's message, per embedder (measured
# on weather/time/memory tools and langmem's: hash scores unrelated texts below 0.16 and a
# message naming what the tool does 0.25 and up; the static MiniLM vectors 0.31 and below, and
# 0.33 and up).
FIT_THRESHOLDS = {"hash": 0.25, "static": 0.32, "minilm": 0.35}
_MAX_PARALLEL = 4
_DIMS = 512
# fmt: off
_STOP = frozenset((
    "a", "an", "the", "is", "are", "was", "were", "be", "been", "am", "i", "me", "my", "we",
    "our", "you", "your", "he", "she", "it", "they", "them", "his", "her", "its", "their", "this",
    "that", "these", "those", "there", "here", "what", "whats", "when", "where", "who", "why",
    "how", "which", "do", "does", "did", "to", "of", "in", "on", "at", "for", "from", "by",
    "with", "about", "as", "and", "or", "but", "if", "then", "so", "not", "no", "yes", "can",
    "could", "would", "should", "will", "shall", "may", "might", "must", "please", "tell", "give",
    "get", "set", "make", "let", "now", "right", "current", "currently", "some", "any", "all",
    "just", "also", "very", "really", "tool", "tools", "function", "use", "call",
))
# fmt: on
_WORD_RE = re.compile(r"[a-z0-9]+")
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+|\n+")
_MAX_SENTENCES = 16
# Bounded runs only: the pattern scans what the arm sent (a run of 20,000 spaces must not cost
# seconds). Only so much of a message is matched against tools, in so many clauses.
_CLAUSE_RE = re.compile(
    r"(?<=[.!?;])[ \t]{1,8}|\n|,?[ \t]{1,3}(?:and|also|then|plus)[ \t]{1,3}", re.I
)
_MAX_USER = 4000
_MAX_CLAUSES = 8
_CAMEL_RE = re.compile(r"([a-z])([A-Z])")
# "Use tools.", "Always call a tool", "You must use the tools": instructions to call one. Found
# from each use/call/invoke (a literal search), then checked before and after it: one pattern
# over the whole text would backtrack at every newline of a long prompt.
_USE_VERB_RE = re.compile(r"\b(?:use|call|invoke)\b", re.I)
_BEFORE_USE_RE = re.compile(
    r"(?:^|[.!?:\n])[ \t\n]{0,8}(?:always[ \t]|you[ \t]must[ \t]|you[ \t]should[ \t])?$", re.I
)
_AFTER_USE_RE = re.compile(
    r"[ \t](?:the[ \t]|your[ \t]|a[ \t]|an[ \t]|one[ \t]of[ \t]the[ \t])?(?:\w{1,30}[ \t])?tools?\b"
    # "Use tools when needed" leaves it to the model: only a plain instruction counts.
    r"(?![ \t]{1,3}(?:when|if|as|where|only)\b)",
    re.I,
)
_MAX_VERBS = 256
# Tools that deliver the answer rather than look something up, by a word of their name
# (pydantic-ai's final_result, langmem's Done, an agent's submit_answer).
_ANSWERING_WORDS = frozenset(
    ("final", "answer", "respond", "response", "reply", "finish", "done", "submit")
)


def _told_to_use_tools(text: str) -> bool:
    for n, verb in enumerate(_USE_VERB_RE.finditer(text)):
        if n >= _MAX_VERBS:
            return False
        before = text[max(0, verb.start() - 24) : verb.start()]
        if _BEFORE_USE_RE.search(before) and _AFTER_USE_RE.match(text, verb.end()):
            return True
    return False


@dataclass(frozen=True)
class OfferedTool:
    name: str
    description: str = ""


def similarity(a: str, b: str, embedder: str = "hash") -> float:
    """How alike two texts are by the record-mode embedder the stubs file names."""
    # Summed in float64 in a fixed order and rounded, so the decision is the same on every
    # machine (a BLAS dot product may sum in another order).
    products = np.multiply(_vector(a, embedder), _vector(b, embedder), dtype=np.float64)
    return round(math.fsum(float(x) for x in products), 6)


def used_embedder(embedder: str) -> str:
    """The embedder similarity uses: the stubs file's, or hash for a name it does not know."""
    return embedder if embedder in FIT_THRESHOLDS else "hash"


@functools.lru_cache(maxsize=4096)
def _vector(text: str, embedder: str) -> Any:
    return embed_texts([text], _DIMS, used_embedder(embedder))[0]


def _split_name(name: str) -> list[str]:
    return _WORD_RE.findall(_CAMEL_RE.sub(r"\1 \2", name).replace("_", " ").lower())


def content_words(text: str) -> str:
    """The words that carry meaning: identifiers split (get_weather, getWeather), stop words
    and the words every tool offer shares ("get", "tool") dropped."""
    spaced = _CAMEL_RE.sub(r"\1 \2", text).replace("_", " ").replace("-", " ").lower()
    return " ".join(w for w in _WORD_RE.findall(spaced) if w not in _STOP)


def fit_score(user: str, tool: OfferedTool, embedder: str = "hash") -> float:
    """How well the user's words fit the tool, as a share of the fit threshold (1.0 and up
    fits): against its name and whole description, and against its name with each sentence of
    the description (a long description says when to call the tool in one line: "...an
    explicit USER request to remember something"). A meaning embedder's score is taken with
    the hash one's, so a word the message and the description share counts too."""
    said = content_words(user[:_MAX_USER])
    if not said:
        return 0.0
    sentences = [s for s in _SENTENCE_RE.split(tool.description) if s.strip()][:_MAX_SENTENCES]
    offers = [f"{tool.name} {tool.description}"]
    if len(sentences) > 1:
        offers += [f"{tool.name} {s}" for s in sentences]
    words = [o for o in map(content_words, offers) if o]
    best = 0.0
    for name in dict.fromkeys((used_embedder(embedder), "hash")):
        top = max((similarity(said, o, name) for o in words), default=0.0)
        best = max(best, top / FIT_THRESHOLDS[name])
    return round(best, 6)


def focus_of(user: str, tool: OfferedTool, embedder: str = "hash") -> str:
    """The clause of the user's message that fits `tool` best ("the time in Tokyo" of "the
    weather in Paris and the time in Tokyo"), so its arguments take that clause's values."""
    clauses = _clauses(user)
    if len(clauses) < 2:
        return ""
    return max(clauses, key=lambda c: fit_score(c, tool, embedder))


def _named_in(text: str, name: str) -> bool:
    if len(name) < 3:
        return False
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text) is not None


def tools_to_call(
    tools: Sequence[OfferedTool],
    choice: Choice,
    turn: Turn,
    parallel: bool,
    override: str | None = None,
    embedder: str = "hash",
) -> list[OfferedTool]:
    """The tools the reply calls, in order; [] means answer in text. `embedder` is the stubs
    file's record-mode embedder, whose similarity ranks the tools."""
    if not tools:
        return []
    fresh = [t for t in tools if t.name not in turn.called]
    if override is not None:
        return _overridden(tools, fresh, override, choice)
    if turn.results and choice == "auto":
        # A result that names another offered tool asks for it; otherwise the answer is text.
        asked = [t for t in fresh if any(_named_in(r, t.name) for r in turn.results)]
        return asked[:1]
    pool = fresh or (list(tools) if choice == "required" else [])
    if not pool:
        return []
    if turn.results and choice == "required":
        # A call is forced with the results in: the tool that answers (pydantic-ai's
        # final_result), not another lookup the user did not ask for.
        answering = [t for t in pool if _ANSWERING_WORDS & set(_split_name(t.name))]
        if answering:
            return answering[:1]
    threshold = 1.0
    scored = sorted(
        ((_score(turn, t, embedder), i, t) for i, t in enumerate(pool)),
        key=lambda s: (-s[0], s[1]),
    )
    best_score, _, best = scored[0]
    if best_score < threshold:
        told = _told_to_use_tools(turn.system) or _told_to_use_tools(turn.user)
        if choice == "required" or (told and turn.user.strip()):
            return [best]
        return []
    if not parallel:
        return [best]
    # Parallel calls: the best tool of each clause that asks for one ("the weather in Paris and
    # the time in Tokyo" asks two things); one question is one call, however many tools fit it.
    wanted = {best.name}
    for clause in _clauses(turn.user):
        top = max(pool, key=lambda t: fit_score(clause, t, embedder))
        if fit_score(clause, top, embedder) >= threshold:
            wanted.add(top.name)
    return [t for _, _, t in scored if t.name in wanted][:_MAX_PARALLEL]


def _clauses(user: str) -> list[str]:
    found = (c.strip() for c in _CLAUSE_RE.split(user[:_MAX_USER]))
    return [c for c in found if c][:_MAX_CLAUSES]


def _score(turn: Turn, tool: OfferedTool, embedder: str) -> float:
    fit = max(fit_score(c, tool, embedder) for c in [turn.user, *_clauses(turn.user)])
    # A tool the user or the instructions name is meant to be called: it outranks similarity.
    if _named_in(turn.user, tool.name) or _named_in(turn.system, tool.name):
        return 1.0 + fit
    return fit


def _overridden(
    tools: Sequence[OfferedTool], fresh: list[OfferedTool], override: str, choice: Choice
) -> list[OfferedTool]:
    if override == "never":
        return [tools[0]] if choice == "required" else []
    wanted = tools[0].name if override == "first" else override
    for tool in fresh if choice == "auto" else tools:
        if tool.name == wanted:
            return [tool]
    return [tools[0]] if choice == "required" else []
