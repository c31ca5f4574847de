"""What a request's own text offers a generated JSON instance: names, sentences, dates, indices.

A schema-valid instance made of word-list filler ("garnet", "cedar") is useless to an engine that
stores it: graphiti names its graph nodes after it and searches it. A real model answers from the
prompt, so the generator does too (stubs.schema.instance asks this module by field name):
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
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from stubs.prompt.conversation import turn_of
from stubs.prompt.said import said_text, tag_text
from vendors.tokens import texts_of

# Capitalised words that start sentences or stand for the speaker, never a proper noun alone.
# fmt: off
_NOT_NAMES = frozenset((
    "a", "an", "the", "i", "i'm", "i've", "i'd", "my", "me", "we", "our", "us", "you", "your",
    "he", "she", "it", "they", "them", "his", "her", "its", "their", "this", "that", "these",
    "those", "there", "here", "what", "when", "where", "who", "why", "how", "yes", "no", "ok",
    "okay", "hi", "hello", "thanks", "and", "or", "but", "so", "if", "then", "also", "just",
    "very", "really", "today", "yesterday", "tomorrow", "last", "next", "monday", "tuesday",
    "wednesday", "thursday", "friday", "saturday", "sunday", "user", "assistant", "system",
    # Words that open instructions and questions: the prompt's own voice, not a name.
    "respond", "return", "extract", "use", "given", "make", "remember", "note", "please",
    "output", "format", "provide", "answer", "question", "summarize", "list", "find", "search",
    "call", "write", "read", "tell", "show", "create", "update", "delete", "add", "store",
    "save", "consider", "based", "each", "every", "only", "do", "don't", "never", "always",
    "after", "before", "now", "json", "xml", "api", "id", "url", "can", "could", "would",
    "should", "will", "is", "are", "was", "were", "did", "does", "have", "has", "let", "get",
    "give", "keep", "think", "be", "not", "all", "any", "some", "in", "on", "at", "for", "to",
    "of", "with", "from", "by", "as", "about", "into", "describe", "explain", "identify",
    "review", "include", "avoid", "ensure", "follow", "reply", "instructions", "example",
    "examples", "input", "inputs", "task", "context", "current", "new", "existing", "facts",
    "fact", "memory", "memories", "summary", "what's", "where's", "who's", "how's", "it's",
))
# Words before a proper noun that make it a place: "lives in Porto", "flew to Oslo".
_PLACE_RE = re.compile(
    r"\b(?:in|at|from|to|near|visit|visiting|visited|around|of)[ \t]{1,3}(?:the[ \t]{1,3})?"
    r"([A-Z][\w'’-]{0,60}(?:[ \t]{1,3}[A-Z][\w'’-]{0,60}){0,3})"
)
_NUMBER_RE = re.compile(r"(?<![\w.-])(-?\d{1,12}(?:\.\d{1,6})?)(?![\w.]\d)")
_WORDS_RE = re.compile(r"[a-z]+")
_REMEMBER_RE = re.compile(
    r"^(?:please[ \t,]{1,3})?(?:remember|note|keep in mind|don't forget|do not forget|fyi)"
    r"(?:[ \t]{1,3}that)?[ \t]{0,3}[,:]?[ \t]{1,3}",
    re.I,
)
# fmt: on
# Every pattern here runs on text an arm sent, so each is linear: quantifiers are bounded or
# cannot overlap (a hostile prompt of 20,000 spaces must not cost seconds), and tags and headings
# are found with str.find and line scans, not lazy regexes.
_NAME_RE = re.compile(r"\b[A-Z][\w'’-]{0,60}(?:[ \t]{1,3}(?:of |de |the )?[A-Z][\w'’-]{0,60}){0,5}")
# A name listed as a JSON or Python string, closed by its own quote: "Philosopher's Path" is
# one name (cut at its apostrophe, its edges named a node "Philosopher" graphiti then made).
_LISTED_NAME_RE = re.compile(
    r"""["']name["'][ \t]{0,3}:[ \t]{0,3}"""
    r"""(?:"((?:[^"\\\n]|\\.){1,120})"|'((?:[^'\\\n]|\\.){1,120})')"""
)
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
_PLACE_FIELDS = ("city", "town", "location", "place", "country", "destination", "region", "home")
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
    places: tuple[str, ...] = ()  # names the text puts a place preposition before
    sentences: tuple[str, ...] = ()
    dates: tuple[datetime, ...] = ()
    ints: dict[str, tuple[int, ...]] = field(default_factory=dict)
    # Numbers the user's text gives, each with the words around it ("lena is | years old and").
    numbers: tuple[tuple[int | float, str], ...] = ()

    @property
    def has_material(self) -> bool:
        return bool(self.sentences or self.listed_names or self.said_names or self.dates)

    def names(self) -> tuple[str, ...]:
        return self.listed_names or self.said_names

    def latest_date(self) -> datetime | None:
        return max(self.dates) if self.dates else None

    def people(self) -> tuple[str, ...]:
        """The names, places last (a name field wants "Lena", not "Porto")."""
        if self.listed_names:
            return self.listed_names
        people = tuple(n for n in self.said_names if n not in self.places)
        return people + tuple(n for n in self.said_names if n in self.places)

    def numbers_for(self, field_name: str) -> list[int | float]:
        """Numbers the text gives for a field: those said next to its name's words first
        ("34 years old" for age, "3 days" for days), then the rest in order."""
        near = self.numbers_near(field_name)
        return near + [v for v, _ in self.numbers if v not in near]

    def numbers_near(self, field_name: str) -> list[int | float]:
        """The numbers said next to the words of a field's name."""
        wanted = set(_WORDS_RE.findall(field_name.lower().replace("_", " ")))
        wanted |= {w.rstrip("s") for w in wanted}
        if "age" in wanted:
            wanted |= {"years", "year", "old", "aged"}
        wanted = {w for w in wanted if len(w) >= 3}

        def distance(context: str) -> int:
            """How many words from the number its field is said ("scored" for score, "days"
            for day), or 0 when it is not said beside it."""
            before, _, after = context.partition(" | ")
            near = [*enumerate(reversed(before.split()), 1), *enumerate(after.split(), 1)]
            hits = [
                d
                for d, w in near
                if len(w) >= 3 and any(w.startswith(x) or x.startswith(w) for x in wanted)
            ]
            return min(hits, default=0)

        scored = [(distance(context), i, v) for i, (v, context) in enumerate(self.numbers)]
        return [v for d, _, v in sorted(scored) if d]


def field_kind(name: str) -> str | None:
    """ "name", "place", "prose", "date" or None for a JSON property name, by what it is called."""
    lowered = name.lower()
    if any(k in lowered for k in _DATE_FIELDS) and not lowered.endswith(("_id", "_ids")):
        return "date"
    if lowered in _PROSE_FIELDS or lowered.endswith(tuple("_" + p for p in _PROSE_FIELDS)):
        return "prose"
    if lowered in _PLACE_FIELDS or lowered.endswith(tuple("_" + p for p in _PLACE_FIELDS)):
        return "place"
    if lowered.endswith("name") or lowered in _NAME_FIELDS:
        return "name"
    return None


def iso(moment: datetime) -> str:
    """ISO 8601 with a Z suffix, what engines' prompts ask for (graphiti's EdgeTimestamps)."""
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def grounding_of(body: dict[str, Any], focus: str = "") -> Grounding:
    """The grounding of a request body (cached on its canonical JSON: one request, one parse);
    a `focus` (part of the user's text) puts its names and numbers first."""
    return _grounding(json.dumps(body, sort_keys=True, default=str), focus)


@functools.lru_cache(maxsize=256)
def _grounding(key: str, focus: str) -> Grounding:
    body = json.loads(key)
    texts = [
        t for name in ("system", "instructions", "messages", "input") for t in _texts(body, name)
    ]
    whole = "\n".join(texts)[:_MAX_TEXT]
    said = said_text(body, whole)
    keyed = "\n".join(_non_system_texts(body))[:_MAX_TEXT]
    results = "\n".join(turn_of(body).results)[:_MAX_TEXT]
    return grounding_from(f"{focus}\n{said}" if focus else said, whole, keyed, results)


def _non_system_texts(body: dict[str, Any]) -> list[str]:
    """The texts of the messages that are not instructions: where an engine lists the names
    and ids a reply may use (graphiti's <ENTITIES>), while the instructions' worked examples
    ({"name": "...", "age": 0}) are not values."""
    messages = body.get("messages", body.get("input"))
    if isinstance(messages, str):
        return [messages]
    out: list[str] = []
    for item in messages if isinstance(messages, list) else []:
        if isinstance(item, dict) and item.get("role") not in ("system", "developer"):
            out.extend(texts_of(item.get("content", item.get("output"))))
    return out


def grounding_from(
    said: str, whole: str = "", keyed: str | None = None, results: str = ""
) -> Grounding:
    """The grounding of `said` (what the user said), with the prompt's clock read from `whole`
    (all of the request's text; `said` if empty) and the names and integers it lists by key
    from `keyed` (its messages other than the instructions; `whole` if None). What tools have
    returned for the user's message (`results`) comes first in prose and numbers: a summary
    after a weather call says the weather; names stay the user's first."""
    whole = whole or said
    keyed = whole if keyed is None else keyed
    listed = _unique(
        name
        for name in (_listed_name(m).strip() for m in _LISTED_NAME_RE.finditer(keyed))
        if any(c.isalnum() for c in name)
    )
    return Grounding(
        listed_names=listed,
        said_names=_unique((*proper_nouns(said), *proper_nouns(results))),
        places=_unique((*places_in(said), *places_in(results))),
        sentences=_unique((*sentences_of(results), *sentences_of(said))),
        # The prompt's own clock first: its worked examples carry dates of their own.
        dates=tuple(_dates(_clock_text(whole)) or _dates(said) or _dates(whole)),
        ints=_ints(keyed),
        numbers=(*numbers_in(results), *numbers_in(said)),
    )


def _listed_name(match: re.Match[str]) -> str:
    """A listed name's text: a JSON string's escapes read ("a \\"b\\"" is a "b")."""
    if match.group(1) is None:
        return match.group(2)
    try:
        return str(json.loads(f'"{match.group(1)}"'))
    except ValueError:
        return match.group(1)


def _texts(body: dict[str, Any], name: str) -> list[str]:
    return texts_of(body.get(name)) if name in body else []


def sentences_of(text: str) -> tuple[str, ...]:
    """The sentences of `text`, speaker labels ("user: ") removed, in order, once each; a
    request to remember is the fact it states ("Remember that my sister lives in Lisbon." ->
    "My sister lives in Lisbon."), as a memory engine's model writes it down."""
    plain = speakerless(text)
    found = (s.strip().strip("\"'[]{}").strip() for s in _SENTENCE_END_RE.split(plain))
    return _unique(_fact_of(s) for s in found if len(s.split()) >= 2)


def _fact_of(sentence: str) -> str:
    rest = _REMEMBER_RE.sub("", sentence, count=1)
    if rest == sentence or len(rest.split()) < 2:
        return sentence
    return rest[0].upper() + rest[1:]


def places_in(text: str) -> tuple[str, ...]:
    """Proper nouns the text puts a place preposition before ("lives in Porto")."""
    names = set(proper_nouns(text))
    return _unique(m.group(1) for m in _PLACE_RE.finditer(text) if m.group(1) in names)


def numbers_in(text: str) -> tuple[tuple[int | float, str], ...]:
    """The numbers of `text` (not parts of dates or identifiers), each with the three words
    on either side, lowercased."""
    out: list[tuple[int | float, str]] = []
    for m in _NUMBER_RE.finditer(text):
        raw = m.group(1)
        if _DATE_RE.match(text, max(0, m.start() - 8)) or len(out) >= 64:
            continue
        value: int | float = float(raw) if "." in raw else int(raw)
        before = _WORDS_RE.findall(text[max(0, m.start() - 40) : m.start()].lower())[-3:]
        after = _WORDS_RE.findall(text[m.end() : m.end() + 40].lower())[:3]
        out.append((value, " ".join(before) + " | " + " ".join(after)))
    return tuple(out)


def proper_nouns(text: str) -> tuple[str, ...]:
    """Capitalised phrases that are not sentence openers or pronouns ("Ana", "New York")."""
    return _unique(name for name, _ in name_spans(speakerless(text)))


def speakerless(text: str) -> str:
    """`text` without its speaker labels ("user: ")."""
    return _SPEAKER_RE.sub("", text)


def name_spans(plain: str) -> Iterator[tuple[str, bool]]:
    """Each capitalised phrase of `plain` (speaker labels already removed), in order, with
    whether it opens its sentence or line: "Great" in "Great, thanks." does; "Ana" in "I met
    Ana" and "Louvre" in "The Louvre" (its article dropped) do not."""
    for match in _NAME_RE.finditer(plain):
        words = match.group(0).split()
        leading = len(words)
        while words and words[0].lower().strip("'’") in _NOT_NAMES:
            words = words[1:]
        while words and words[-1].lower().strip("'’") in _NOT_NAMES:
            words = words[:-1]
        # Long all-capitals words are a prompt's headings (INSTRUCTIONS), not names.
        if words and not (len(words) == 1 and words[0].isupper() and len(words[0]) > 4):
            before = plain[max(0, match.start() - 8) : match.start()].rstrip(" \t\"'([*-")
            opens = len(words) == leading and (not before or before[-1] in ".!?:\n")
            yield " ".join(words), opens


def not_a_name(word: str) -> bool:
    """A word that is never a name alone: a pronoun, article or instruction word, also when
    contracted ("I'll", "That's")."""
    lowered = word.lower().replace("’", "'")
    return lowered.strip("'") in _NOT_NAMES or lowered.split("'")[0] in _NOT_NAMES


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
