"""The report written out: markdown and one self-contained HTML page from the same sections
(`render.py`, Jinja2 templates in `templates/`, markdown's escaping `md_escape.py`), the PDF
printed by headless Chromium (`chromium.py`), report.json (`report_json.py`), the raw rows
records.jsonl (`records.py`), the per-item drill-down page (`drilldown.py`), and what a terminal
shows: the per-arm table (`table.py`) and the progress while it works (`terminal.py`).

Submodules are imported where used (not here), so importing one loads only what it needs."""

__all__ = [
    "chromium",
    "drilldown",
    "md_escape",
    "records",
    "render",
    "report_json",
    "table",
    "terminal",
]
