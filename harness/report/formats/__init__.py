"""The report written out: markdown and one self-contained HTML page from the same sections
(`render.py`, Jinja2 templates in `templates/`, markdown's escaping `md_escape.py`), the PDF
printed by headless Chromium (`chromium.py`), report.json (`report_json.py`), the raw rows
records.jsonl (`records.py`), the per-item drill-down page (`drilldown.py`), and what a terminal
shows: the per-arm table (`table.py`) and the progress while it works (`terminal.py`).

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

from harness.report.formats.chromium import print_pdf
from harness.report.formats.drilldown import write_drilldown
from harness.report.formats.records import records, write_records
from harness.report.formats.render import HTML_TEMPLATES, render_html, render_markdown
from harness.report.formats.report_json import ReportFile, report_file
from harness.report.formats.table import render_table, text_table
from harness.report.formats.terminal import report_progress

__all__ = [
    "HTML_TEMPLATES",
    "ReportFile",
    "print_pdf",
    "records",
    "render_html",
    "render_markdown",
    "render_table",
    "report_file",
    "report_progress",
    "text_table",
    "write_drilldown",
    "write_records",
]
