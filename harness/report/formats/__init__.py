"""The report written out: markdown and one self-contained HTML page from the same sections
(`render.py`, Jinja2 templates in `templates/`, markdown's escaping `md_escape.py`), the PDF
printed by headless Chromium (`chromium.py`), report.json (`report_json.py`), the raw rows
records.jsonl (`records.py`), the per-item drill-down page (`drilldown.py`), and what a terminal
shows: the per-arm table (`table.py`) and the progress while it works (`terminal.py`).

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

import importlib
from typing import TYPE_CHECKING, Any

from harness.report.formats.records import records

if TYPE_CHECKING:
    from harness.report.formats.chromium import print_pdf
    from harness.report.formats.drilldown import write_drilldown
    from harness.report.formats.records import write_records
    from harness.report.formats.render import HTML_TEMPLATES, render_html, render_markdown
    from harness.report.formats.report_json import ReportFile, report_file
    from harness.report.formats.table import render_table, text_table
    from harness.report.formats.terminal import report_progress

# What this face offers is loaded on first use (PEP 562): a user of one name loads the module
# that defines it, not the whole part (a judge's process must not load scipy).
_OFFERED = {
    "HTML_TEMPLATES": "harness.report.formats.render",
    "ReportFile": "harness.report.formats.report_json",
    "print_pdf": "harness.report.formats.chromium",
    "render_html": "harness.report.formats.render",
    "render_markdown": "harness.report.formats.render",
    "render_table": "harness.report.formats.table",
    "report_file": "harness.report.formats.report_json",
    "report_progress": "harness.report.formats.terminal",
    "text_table": "harness.report.formats.table",
    "write_drilldown": "harness.report.formats.drilldown",
    "write_records": "harness.report.formats.records",
}


def __getattr__(name: str) -> Any:
    if name not in _OFFERED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_OFFERED[name]), name)


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
