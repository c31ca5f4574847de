"""Replies in the markup a prompt asks for: an XML list (llama-index's fact extraction,
`<facts><fact>...</fact></facts>`) or markdown sections ("Answer with these sections: ## ...").

Both are filled with the user's own statements: what the conversation's user messages say,
without the message that carries the instructions (llama-index sends its extraction prompt as
the newest user message, after the conversation it is about), and without questions (a fact is
something the user told, not something they asked). Pure functions of the request.
"""

from __future__ import annotations

import re

from stubs.prompt import Turn, engine_tag_text, sentences_of, without_assistant

# `<facts>` then (after an optional comment) `<fact>`: a list the reply fills item by item.
_LIST_OPEN_RE = re.compile(
    r"<([A-Za-z][\w-]{0,40})>[ \t\n]{0,40}(?:<!--[^>]{0,200}-->[ \t\n]{0,40})?"
    r"<([A-Za-z][\w-]{0,40})>"
)
_REPLY_CUE_RE = re.compile(r"\b(?:format|return|respond|reply|output|answer)\b", re.I)
_HEADING_RE = re.compile(r"^(#{1,4})[ \t]+(\S[^\n]{0,120})$", re.M)
_SECTIONS_NOUN_RE = re.compile(
    r"\b(?:sections?|headings?|headers?|format|structure|template)\b", re.I
)
_SECTIONS_VERB_RE = re.compile(
    r"\b(?:respond|answer|reply|output|format|structure|use|write|include)\b", re.I
)
# Only so many templates and requests for sections are tried: the text is the arm's.
_MAX_TEMPLATES = 32
_MAX_ITEMS = 10


def user_statements(turn: Turn, instructions: str) -> list[str]:
    """The sentences the user stated, oldest first: from the engine's message tag when the
    instructions carry one, else from the user's messages other than `instructions`."""
    tagged = engine_tag_text(instructions)
    if tagged:
        texts = [without_assistant(tagged)]
    else:
        texts = [u for u in (*turn.earlier_users, turn.user) if u and u != instructions]
        if not texts:
            # Only the instructions: their own data is all there is (the part before them).
            texts = [turn.user]
    sentences = [s for t in texts for s in sentences_of(without_assistant(t))]
    return [s for s in dict.fromkeys(sentences) if not s.endswith("?")][:_MAX_ITEMS]


def xml_list_reply(turn: Turn) -> str | None:
    """`<outer><inner>...</inner>...</outer>` filled with the user's statements, when the prompt
    (its newest user message, else its system text) shows that template."""
    for source in (turn.user, turn.system):
        for n, match in enumerate(_LIST_OPEN_RE.finditer(source)):
            if n >= _MAX_TEMPLATES:
                break
            outer, inner = match.group(1), match.group(2)
            # Claude-style prompts wrap their own instructions in nested tags: only a template
            # the prompt asks the reply to follow ("Return ... in this exact format:") counts.
            if not _REPLY_CUE_RE.search(source, max(0, match.start() - 200), match.start()):
                continue
            closes_inner = source.find(f"</{inner}>", match.end())
            closes_outer = source.find(f"</{outer}>", match.end())
            if outer == inner or closes_inner < 0 or closes_outer < closes_inner:
                continue
            items = user_statements(turn, turn.user if source is turn.user else "")
            body = "".join(f"\n  <{inner}>{_escape(s)}</{inner}>" for s in items)
            return f"<{outer}>{body}\n</{outer}>" if items else f"<{outer}></{outer}>"
    return None


def markdown_sections_reply(turn: Turn) -> str | None:
    """The headings the prompt asks the answer to have, each followed by the user's words."""
    for source in (turn.user, turn.system):
        asked = _sections_asked(source)
        if asked is None:
            continue
        headings = [m for m in _HEADING_RE.finditer(source, asked)][:_MAX_ITEMS]
        if len(headings) < 2:
            continue
        statements = user_statements(turn, turn.user if source is turn.user else "")
        statements = statements or ["Nothing was said about this."]
        blocks = [
            f"{m.group(1)} {m.group(2).strip()}\n{statements[i % len(statements)]}"
            for i, m in enumerate(headings[:_MAX_ITEMS])
        ]
        return "\n\n".join(blocks)
    return None


def _sections_asked(text: str) -> int | None:
    """Where a request for sections ends ("Respond using the following sections:"), found from
    each of its nouns (a literal search) looking back a line's worth for its verb."""
    for n, noun in enumerate(_SECTIONS_NOUN_RE.finditer(text)):
        if n >= _MAX_TEMPLATES:
            break
        line_start = max(text.rfind("\n", 0, noun.start()) + 1, noun.start() - 100)
        if _SECTIONS_VERB_RE.search(text, line_start, noun.start()):
            return noun.end()
    return None


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
