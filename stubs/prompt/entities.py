"""The entities a message names, as an extraction model would list them (graphiti's
<CURRENT MESSAGE>): its names and titles, never the capitalised first word of a sentence.

`proper_nouns` takes every capitalised phrase, which in conversational text is mostly the first
word of a sentence: "Great, thanks.", "Enjoy the visit.", "Rates change often." A model asked
for entities ("NEVER extract ... generic words"; "When in doubt, do NOT extract") lists
"Waffles" and "Riverside Animal Shelter" and none of those. So a phrase the message only ever
puts first in a sentence is kept when it is several capitalised words ("Fushimi Inari Shrine"),
or one word that is no English word and that the message never writes in lower case
("Kinkaku-ji"). A possessive is its owner ("Priya's" -> "Priya"). Every name is a phrase of
the message itself, in the order it first says them, once; a pure function of the text.
"""

from __future__ import annotations

import functools
import re

from stubs.prompt.grounding import name_spans, not_a_name, speakerless
from stubs.vectors import table

# Interjections a dictionary of written English lacks.
_INTERJECTIONS = frozenset(("haha", "hahaha", "hehe", "hmm", "hmmm", "yay", "oops", "lol", "omg"))
_LOWER_WORD_RE = re.compile(r"(?<![\w'’-])[a-z][a-z'’-]{0,60}")
_POSSESSIVE_RE = re.compile(r"['’]s$")


def entity_names(text: str) -> list[str]:
    """The entities `text` names (see the module doc), in order, once each."""
    plain = speakerless(text)
    lower = set(_LOWER_WORD_RE.findall(plain))
    kept: dict[str, None] = {}
    openers: dict[str, None] = {}
    seen: list[str] = []
    for name, opens in name_spans(plain):
        name = _POSSESSIVE_RE.sub("", name)
        seen.append(name)
        if not name or (" " not in name and not_a_name(name)):
            continue
        (openers if opens else kept)[name] = None
    for name in openers:
        if name in kept or " " in name:
            kept[name] = None
            continue
        word = name.lower()
        if word not in lower and not _common_word(word):
            kept[name] = None
    # In the order the message first says them (kept lists mid-sentence names first).
    first = {name: i for i, name in reversed(list(enumerate(seen)))}
    return sorted(kept, key=first.__getitem__)


@functools.lru_cache(maxsize=1)
def _dictionary() -> frozenset[str]:
    """Whole English words, lower case: the static embedder's WordPiece vocabulary (BERT's
    uncased 30k; word pieces and [MARKERS] left out). It holds common names too ("tom"), so
    a name that only ever opens a sentence is dropped: the prompt's "when in doubt, do NOT
    extract", and a name is usually introduced mid-sentence ("my friend Tom") anyway."""
    return frozenset(w for w in table().vocab if w.isalpha())


def _common_word(word: str) -> bool:
    if word in _INTERJECTIONS:
        return True
    words = _dictionary()
    return any(w in words for w in (word, word.removesuffix("s"), word.removesuffix("es")))
