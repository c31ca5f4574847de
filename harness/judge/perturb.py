"""Planted controls: the run's own replies, perturbed so that a judge doing its job must notice.

Flag rubrics (a perturbed reply must be flagged, a clean one must not):
- strong: `wrong_fact` (a fact the user gave swapped for another), `deleted_ack` (the opening
  acknowledgement removed), `spliced` (a sentence from another conversation appended);
- mild: `inverted` (one trait negated);
- clean: a reply of the rubric's declared clean set (clean_set.py), unchanged; padded: the same
  clean reply with neutral words added, which must read the same (not flagged).
Pairwise rubrics (the original must beat its perturbed copy in both orders): `truncated`,
`repeated`, `off_topic` (another conversation's sentence appended), `wrong_fact`; and
`near_identical` (a copy changed in form only: no verdict is right, but it must not follow the
order); `padded` (the same reply with neutral words added: it must tie, so a judge that breaks
ties toward the longer reply is caught).

A perturbation that does not apply to a reply (no fact to swap, no acknowledgement to delete)
returns None and the planner draws another reply: a control is never a no-op.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from random import Random

ACK_OPENERS = re.compile(
    r"^(?:(?:noted|i understand|understood|thanks(?: for telling me)?|thank you|got it|"
    r"you told me|you said|ok(?:ay)?|sure|i see|i remember)\b[^.:!?]*[.:!?]\s*)+",
    re.IGNORECASE,
)
# Replacements that no everyday conversation is likely to have said: a swapped fact must be new.
CONTRASTING_FACTS = (
    "Reykjavik",
    "Ulaanbaatar",
    "Tuesday",
    "saxophone",
    "Paraguay",
    "1987",
    "zebras",
)
NEGATIONS = {
    "is": "is not",
    "are": "are not",
    "am": "am not",
    "was": "was not",
    "can": "cannot",
    "will": "will not",
    "like": "dislike",
    "love": "hate",
    "want": "do not want",
    "have": "do not have",
}
# Neutral words: they say nothing about the user, the facts or the reply's quality, so a reply
# with them added must read the same as without. Two are added, so the copy is clearly longer.
NEUTRAL_PADDING = (
    "Let me keep that in mind.",
    "So that is what I have here.",
    "Thanks for telling me.",
    "I have that in mind.",
    "So that is it then.",
)
CONTRASTING_SENTENCE = "As a pirate captain I despise small talk and never remember anything."
WORD = re.compile(r"[A-Za-z0-9']+")
SENTENCE_END = (".", "!", "?")


def wrong_fact(reply: str, said: str, rng: Random, other: str) -> str | None:
    """Swap one word the user said (a name, a number, a noun) for a fact they never gave."""
    heard = {w.lower() for w in WORD.findall(said)}
    body_start = _ack_end(reply)
    candidates = [
        m
        for m in WORD.finditer(reply, body_start)
        if m.group().lower() in heard
        and (m.group()[0].isupper() or m.group().isdigit() or len(m.group()) > 5)
    ]
    if not candidates:
        return None
    target = rng.choice(candidates)
    fresh = [f for f in CONTRASTING_FACTS if f.lower() not in heard]
    return reply[: target.start()] + rng.choice(fresh) + reply[target.end() :]


def deleted_ack(reply: str, said: str, rng: Random, other: str) -> str | None:
    end = _ack_end(reply)
    rest = reply[end:].strip()
    if end == 0 or len(rest.split()) < 2:
        return None
    return rest[0].upper() + rest[1:]


def spliced(reply: str, said: str, rng: Random, other: str) -> str | None:
    return _append(reply, _foreign_sentence(other, said))


def inverted(reply: str, said: str, rng: Random, other: str) -> str | None:
    """Negate one trait: the first verb of a small table after the acknowledgement."""
    for m in WORD.finditer(reply, _ack_end(reply)):
        negated = NEGATIONS.get(m.group().lower())
        if negated:
            return reply[: m.start()] + negated + reply[m.end() :]
    words = list(WORD.finditer(reply, _ack_end(reply)))
    if len(words) < 2:
        return None
    # No verb of the table: "never" before the second word inverts most short statements.
    return reply[: words[1].start()] + "never " + reply[words[1].start() :]


def truncated(reply: str, said: str, rng: Random, other: str) -> str | None:
    words = reply.split()
    if len(words) < 4 or not reply.rstrip().endswith(SENTENCE_END):
        return None
    return " ".join(words[: max(2, (len(words) * 3) // 5)]).rstrip(".!?,;:")


def repeated(reply: str, said: str, rng: Random, other: str) -> str | None:
    if not reply.rstrip().endswith(SENTENCE_END) or len(reply.split()) < 3:
        return None
    return f"{reply.strip()} {reply.strip()}"


def off_topic(reply: str, said: str, rng: Random, other: str) -> str | None:
    return _append(reply, _foreign_sentence(other, said))


def near_identical(reply: str, said: str, rng: Random, other: str) -> str | None:
    """Form only: the closing punctuation changed ('.' and '!' swap), the words unchanged."""
    text = reply.rstrip()
    if text.endswith("."):
        return text[:-1] + "!"
    if text.endswith("!"):
        return text[:-1] + "."
    return None


def padded(reply: str, said: str, rng: Random, other: str) -> str | None:
    """The same reply with two neutral sentences added at its end: longer, saying nothing new."""
    return _append(reply, " ".join(rng.sample(NEUTRAL_PADDING, 2)))


Perturbation = Callable[[str, str, Random, str], "str | None"]
FLAG_CONTROLS: dict[str, tuple[str, Perturbation | None]] = {
    "wrong_fact": ("strong", wrong_fact),
    "deleted_ack": ("strong", deleted_ack),
    "spliced": ("strong", spliced),
    "inverted": ("mild", inverted),
    "clean": ("clean", None),
    "padded": ("clean", padded),
}
PAIRWISE_CONTROLS: dict[str, tuple[str, Perturbation]] = {
    "truncated": ("pairwise", truncated),
    "repeated": ("pairwise", repeated),
    "off_topic": ("pairwise", off_topic),
    "wrong_fact": ("pairwise", wrong_fact),
    "near_identical": ("near_identical", near_identical),
    "padded": ("near_identical", padded),
}
# The kinds drawn from the declared clean set, never from the arms' replies.
FROM_CLEAN_SET = ("clean", "padded")


def _ack_end(reply: str) -> int:
    match = ACK_OPENERS.match(reply)
    return match.end() if match else 0


def _foreign_sentence(other: str, said: str) -> str:
    """A sentence of another conversation's reply that says something this one's user did not,
    else a contrasting card's line."""
    heard = {w.lower() for w in WORD.findall(said)}
    body = other[_ack_end(other) :].strip()
    new = [w for w in WORD.findall(body) if w.lower() not in heard and len(w) > 3]
    if len(new) >= 2 and body.endswith(SENTENCE_END):
        return body
    return CONTRASTING_SENTENCE


def _append(reply: str, sentence: str) -> str | None:
    text = reply.strip()
    if not text:
        return None
    if not text.endswith(SENTENCE_END):
        text += "."
    return f"{text} {sentence}"
