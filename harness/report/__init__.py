"""The study report: `harness report RUN_DIR [RUN_DIR ...]`.

rundata.py reads a run's files; perarm.py computes the per-arm figures (report.json) with
latency.py's percentiles; inputs.py reads the optional inputs (gate, ledger, prices, judgments,
provenance, header); sections.py, verdicts.py and money.py build the thirteen sections;
render.py writes them as markdown and HTML (Jinja2), charts.py draws the SVG charts (pygal),
chromium.py prints the PDF; records.py exports the raw rows; public.py anonymises and scans a
public copy; generate.py ties them together and writes outside the run directory.
"""
