"""Render the sections as markdown and as one self-contained HTML page, with Jinja2.

A template engine rather than string building: the two formats are two small templates over the
same `Section` objects, so content cannot differ between them; the HTML template autoescapes
every value (an arm's reply or an item's text is data, never markup: a `<script>` in a turn text
stays text), and the layout can be read and changed without reading Python. Only the charts,
which pygal drew from numbers, are inserted unescaped.
"""

from __future__ import annotations

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from harness.report.model import Section


def _cell(value: object) -> str:
    # A markdown table cell is one line, and `|` would end it early.
    return str(value).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("harness.report", "templates"),
        autoescape=select_autoescape(enabled_extensions=("html.j2",), default=False),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
    )
    env.filters["cell"] = _cell
    return env


_ENV = _environment()


def render_markdown(title: str, intro: str, sections: list[Section]) -> str:
    return _ENV.get_template("report.md.j2").render(title=title, intro=intro, sections=sections)


def render_html(title: str, intro: str, sections: list[Section]) -> str:
    return _ENV.get_template("report.html.j2").render(title=title, intro=intro, sections=sections)
