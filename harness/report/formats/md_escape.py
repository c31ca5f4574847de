"""Markdown's autoescape: every value the markdown template writes is text, never markup.

The HTML template has Jinja2's autoescape; markdown has none, and a markdown viewer renders
inline HTML, links, images and bare URLs. So the markdown environment escapes every `{{ }}`
value it writes (Jinja2's `finalize`), whatever section built it: a value that came from a run
file, the ledger, a judgment set, the header or an arm (an arm picks the model names in
calls.jsonl) cannot add a tag, a link, an image, a heading or a table row. The report's own
markdown survives escaping because it uses only code spans and emphasis (`` ` ``, `*`), which
make no HTML and no link; a value that closes a code span early is still escaped text after it.

What escaping does: `&`, `<`, `>` become entities (no tag, no autolink, no HTML block, and an
entity in the value stays literal); `\\` and `[`, `]` get a backslash (no link, image or
reference definition); the bare URLs GitHub links (`://`, `www.`, `@`) are broken by backslashes
(which render as nothing); a line break becomes a space (no heading, list or table row).
A code span's text is left as typed, since a renderer shows it verbatim (`<vendor>` in a code
span reads `<vendor>`, not `&lt;vendor&gt;`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable


class Markdown(str):
    """Text already escaped (or built only from escaped text): written as it is."""


_CHARS = str.maketrans(
    {
        "\\": "\\\\",
        "&": "&amp;",
        "<": "&lt;",
        ">": "&gt;",
        "[": "\\[",
        "]": "\\]",
        "@": "\\@",
        "\r": " ",
        "\n": " ",
        "\u2028": " ",
        "\u2029": " ",
    }
)
_WWW = re.compile(r"(?i)(www)\.")


# A code span as CommonMark reads one: a single backtick that no other backtick touches, text
# with no backtick, and a single closing backtick. Inside it a renderer shows every character as
# typed (no tag, entity, link or escape), so its text is left as it is; only a span this pattern
# is sure of is left, and anything it is unsure of is escaped like prose (at worst an entity
# shows as typed, never a tag renders).
_CODE_SPAN = re.compile(r"(?<!`)`([^`]*)`(?!`)")
_SPAN_CHARS = str.maketrans({"\r": " ", "\n": " ", "\u2028": " ", "\u2029": " "})


def _prose(text: str) -> str:
    text = text.translate(_CHARS)
    text = text.replace("://", ":\\/\\/")
    return _WWW.sub(r"\1\\.", text)


def escape(value: object) -> Markdown:
    """`value` as markdown text that renders as the characters of `str(value)`."""
    if isinstance(value, Markdown):
        return value
    text, out, at = str(value), [], 0
    for span in _CODE_SPAN.finditer(text):
        out.append(_prose(text[at : span.start()]))
        out.append("`" + span.group(1).translate(_SPAN_CHARS) + "`")
        at = span.end()
    out.append(_prose(text[at:]))
    return Markdown("".join(out))


def table_row(values: Iterable[object]) -> Markdown:
    """One markdown table row of escaped cells (a cell is one line, and `|` would end it)."""
    cells = [escape(v).replace("|", "\\|") for v in values]
    return Markdown("| " + " | ".join(cells) + " |")
