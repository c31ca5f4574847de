"""What a request's own text offers a generated JSON instance: names, sentences, dates, indices.

A schema-valid instance made of word-list filler ("garnet", "cedar") is useless to an engine that
stores it: graphiti names its graph nodes after it and searches it. A real model answers from the
prompt, so the generator does too (stubs.schema_instance asks this module by field name):
- a field named like a name takes a name the prompt lists (`"name": "..."` in its JSON or Python
  reprs, e.g. graphiti's <ENTITIES>), else a proper noun the messages say;
- a field for prose (fact, summary, text, ...) takes a sentence of the messages, preferring one
  that mentions the names already chosen for the same object;
- a date-named or date-time field takes the latest date the request itself writes (the item's
  clock as the engine put it in the prompt), never the machine's clock;
- an integer field takes a value the prompt gives for that key (`'entity_type_id': 0`), else an
  index inside the prompt's lists.
Everything here is a pure function of the request body, so the reply stays one too.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from stubs.tokens import texts_of

# Capitalised words that start sentences or stand for the speaker, never a proper noun alone.
# fmt: off
_NOT_NAMES = frozenset((
    "a", "an", "the", "i", "i'm", "i've", "i'd", "my", "me", "we", "our", "us", "you", "your",
    "he", "she", "it", "they", "them", "his", "her", "its", "their", "this", "that", "these",
    "those", "there", "here", "what", "when", "where", "who", "why", "how", "yes", "no", "ok",
    "okay", "hi", "hello", "thanks", "and", "or", "but", "so", "if", "then", "also", "just",
    "very", "really", "today", "yesterday", "tomorrow", "last", "next", "monday", "tuesday",
    "wednesday", "thursday", "friday", "saturday", "sunday", "user", "assistant", "system",
))
# fmt: on
# Every pattern here runs on text an arm sent, so each is linear: quantifiers are bounded or
# cannot overlap (a hostile prompt of 20,000 spaces must not cost seconds), and tags and headings
# are found with str.find and line scans, not lazy regexes.
_NAME_RE = re.compile(r"\b[A-Z][\w'’-]{0,60}(?:[ \t]{1,3}(?:of |de |the )?[A-Z][\w'’-]{0,60}){0,5}")
_LISTED_NAME_RE = re.compile(r"""["']name["'][ \t]{0,3}:[ \t]{0,3}["']([^"'\n]{1,120})["']""")
_SENTENCE_END_RE = re.compile(r"(?<=[.!?])\s+|\n+")
_SPEAKER_RE = re.compile(r"^[ \t\"'\[]{0,4}([\w .'-]{1,40}):[ \t]+", re.M)
_TAG_RE = re.compile(r"<([A-Z][A-Z _]{0,40})>")
# Only this much of a request is read for grounding: a 32 MiB body costs no more than 1 MiB.
_MAX_TEXT = 1 << 20
_DATE_RE = re.compile(
    r"\b(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?)?"
    r"(?:Z|[+-]\d{2}:?\d{2})?"
)
_INT_KEY_RE = re.compile(r"""\b([A-Za-z_]\w{0,60})["']?[ \t]{0,3}[:=][ \t]{0,3}(-?\d{1,6})\b""")
# Tags and headings an engine puts around what the user said, most specific first.
_MESSAGE_TAGS = ("CURRENT MESSAGE", "CURRENT_MESSAGE", "MESSAGES", "EPISODE", "TEXT", "FACT")
_PROSE_FIELDS = ("fact", "summary", "text", "description", "content", "memory", "statement")
_NAME_FIELDS = (
    "name",
    "entity",
    "source",
    "target",
    "subject",
    "object",
    "title",
    "label",
    "who",
    "person",
    "speaker",
    "author",
    "owner",
)
_DATE_FIELDS = ("date", "time", "_at", "when", "timestamp", "valid", "invalid", "expired")


@dataclass(frozen=True)
class Grounding:
    """The material of one request, extracted once."""

    listed_names: tuple[str, ...] = ()
    said_names: tuple[str, ...] = ()
    sentences: tuple[str, ...] = ()
    dates: tuple[datetime, ...] = ()
    ints: dict[str, tuple[int, ...]] = field(default_factory=dict)

    @property
    def has_material(self) -> bool:
        return bool(self.sentences or self.listed_names or self.said_names or self.dates)

    def names(self) -> tuple[str, ...]:
        return self.listed_names or self.said_names

    def latest_date(self) -> datetime | None:
        return max(self.dates) if self.dates else None


def field_kind(name: str) -> str | None:
    """ "name", "prose", "date" or None for a JSON property name, by what it is called."""
    lowered = name.lower()
    if any(k in lowered for k in _DATE_FIELDS) and not lowered.endswith(("_id", "_ids")):
        return "date"
    if lowered in _PROSE_FIELDS or lowered.endswith(tuple("_" + p for p in _PROSE_FIELDS)):
        return "prose"
    if lowered.endswith("name") or lowered in _NAME_FIELDS:
        return "name"
    return None


def iso(moment: datetime) -> str:
    """ISO 8601 with a Z suffix, what engines' prompts ask for (graphiti's EdgeTimestamps)."""
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def grounding_of(body: dict[str, Any]) -> Grounding:
    """The grounding of a request body (cached on its canonical JSON: one request, one parse)."""
    return _grounding(json.dumps(body, sort_keys=True, default=str))


@functools.lru_cache(maxsize=256)
def _grounding(key: str) -> Grounding:
    body = json.loads(key)
    texts = [
        t for name in ("system", "instructions", "messages", "input") for t in _texts(body, name)
    ]
    whole = "\n".join(texts)[:_MAX_TEXT]
    said = _said_part(whole)
    return Grounding(
        listed_names=_unique(m.group(1).strip() for m in _LISTED_NAME_RE.finditer(whole)),
        said_names=proper_nouns(said),
        sentences=sentences_of(said),
        # The prompt's own clock first: its worked examples carry dates of their own.
        dates=tuple(_dates(_clock_text(whole)) or _dates(said) or _dates(whole)),
        ints=_ints(whole),
    )


def _texts(body: dict[str, Any], name: str) -> list[str]:
    return texts_of(body.get(name)) if name in body else []


def tag_text(text: str, tag: str) -> str | None:
    """The text between the first `<tag>` and the `</tag>` after it, or None."""
    start = text.find(f"<{tag}>")
    if start < 0:
        return None
    start += len(tag) + 2
    end = text.find(f"</{tag}>", start)
    return text[start:end].strip() if end >= 0 else None


def _said_part(text: str) -> str:
    """What the user said: the engine's message tag when it has one, else the whole text."""
    for tag in _MESSAGE_TAGS:
        found = tag_text(text, tag)
        if found not in (None, "", "[]"):
            return found
    return text


def sentences_of(text: str) -> tuple[str, ...]:
    """The sentences of `text`, speaker labels ("user: ") removed, in order, once each."""
    plain = _SPEAKER_RE.sub("", text)
    found = (s.strip().strip("\"'[]{}").strip() for s in _SENTENCE_END_RE.split(plain))
    return _unique(s for s in found if len(s.split()) >= 2)


def proper_nouns(text: str) -> tuple[str, ...]:
    """Capitalised phrases that are not sentence openers or pronouns ("Ana", "New York")."""
    plain = _SPEAKER_RE.sub("", text)
    out = []
    for match in _NAME_RE.finditer(plain):
        words = match.group(0).split()
        while words and words[0].lower().strip("'’") in _NOT_NAMES:
            words = words[1:]
        if words:
            out.append(" ".join(words))
    return _unique(out)


def _clock_text(text: str) -> str:
    """Where a prompt states its own clock: <REFERENCE_TIME>...</...>, "## Current Date\n..."."""
    found = []
    for name in dict.fromkeys(m.group(1) for m in _TAG_RE.finditer(text)):
        if "TIME" in name or "DATE" in name:
            found.append(tag_text(text, name) or "")
    lines = text.split("\n")
    for i, line in enumerate(lines[:-1]):
        if line.startswith("#") and ("date" in line.lower() or "time" in line.lower()):
            found.append(lines[i + 1])
    return "\n".join(found)


def _dates(text: str) -> list[datetime]:
    out = []
    for m in _DATE_RE.finditer(text):
        y, mo, d, h, mi, s = (int(g) if g else 0 for g in m.groups())
        try:
            out.append(datetime(y, mo, d, h, mi, s))
        except ValueError:
            continue
    return out


def _ints(text: str) -> dict[str, tuple[int, ...]]:
    found: dict[str, list[int]] = {}
    for m in _INT_KEY_RE.finditer(text):
        values = found.setdefault(m.group(1), [])
        if int(m.group(2)) not in values:
            values.append(int(m.group(2)))
    return {k: tuple(v) for k, v in found.items()}


def _unique(items: Any) -> tuple[str, ...]:
    return tuple(dict.fromkeys(i for i in items if i))
