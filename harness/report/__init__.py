"""The study report: `harness report RUN_DIR [RUN_DIR ...]`, and `harness runs ROOT`.

The data flows down the page: `reading/` reads the runs and the optional inputs and checks them
against each other; `figures/` computes the per-arm figures (report.json's); `context.py` holds
all of it for the section builders; `confirmatory/` reads the verdicts under a frozen analysis
plan; `sections/` builds the thirteen sections and the first screen as format-free `Section`s
(`model.py`), with SVG charts (`charts.py`); `formats/` writes them as markdown, HTML, PDF,
report.json and records.jsonl. `public.py` anonymises a public copy and scans it;
`generate.py` ties them together and writes outside the run directory; `runs_index.py` lists the
runs under a folder.
"""

from harness.report.generate import generate, private_words
from harness.report.public import check_public
from harness.report.runs_index import COLUMNS, index_page, list_runs

__all__ = [
    "COLUMNS",
    "check_public",
    "generate",
    "index_page",
    "list_runs",
    "private_words",
]
