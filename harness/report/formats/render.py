"""Render the sections as markdown and as one self-contained HTML page, with Jinja2.

A template engine rather than string building: the two formats are two small templates over the
same `Section` objects, so content cannot differ between them. Both escape every value they
write, at this boundary rather than field by field, so a section added later is escaped too: the
HTML template with Jinja2's autoescape (an arm's reply or an item's text is data, never markup:
a `<script>` in a turn text stays text), the markdown template through `md_escape.escape` as its
`finalize` (no tag, link or image from any run file, ledger, judgment set or header). Only the
charts, which pygal drew from numbers, are inserted unescaped, and only into the HTML.
"""

from __future__ import annotations

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from harness.report.formats.md_escape import escape, table_row
from harness.report.model import Section
from harness.report.sections import FirstScreen


def _html_environment() -> Environment:
    return Environment(
        loader=PackageLoader("harness.report.formats", "templates"),
        autoescape=select_autoescape(enabled_extensions=("html.j2",), default=True),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
    )


def _markdown_environment() -> Environment:
    env = Environment(
        loader=PackageLoader("harness.report.formats", "templates"),
        autoescape=False,
        finalize=escape,  # every {{ }} value; a table row is escaped cell by cell (`row`)
        undefined=StrictUndefined,
        keep_trailing_newline=True,
    )
    env.filters["row"] = table_row
    return env


_HTML = _html_environment()
HTML_TEMPLATES = _HTML  # the HTML environment, for pages beside the report (drilldown.html)
_MARKDOWN = _markdown_environment()


def render_markdown(title: str, intro: str, sections: list[Section], screen: FirstScreen) -> str:
    return _MARKDOWN.get_template("report.md.j2").render(
        title=title, intro=intro, sections=sections, screen=screen
    )


def render_html(
    title: str, intro: str, sections: list[Section], screen: FirstScreen, paper: str = "A4"
) -> str:
    return _HTML.get_template("report.html.j2").render(
        title=title, intro=intro, sections=sections, screen=screen, paper=paper
    )
