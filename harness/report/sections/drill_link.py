"""Links into drilldown.html from the report's rows: the drill-down filters its rows by the text
after `#q=` in its address (harness/report/formats/drilldown.py), so a link needs no id of its
own."""

from __future__ import annotations

from urllib.parse import quote


def drill_href(query: str) -> str:
    """drilldown.html showing only the rows that hold `query`."""
    return "drilldown.html#q=" + quote(query, safe="")
