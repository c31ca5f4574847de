"""`harness runs ROOT`: one line per run under a folder (study, mode, status, items done of
planned, a headline, the report's link) and a static index page, for a researcher with many runs.

Read-only and cheap: run.json, the turn log (counted, so a running run shows its progress as it
goes) and, where `harness report` wrote one, the report's report.json for the outcome. A run's
status is what its header says: running (no end yet: it runs, or was killed), passed, failed,
interrupted or halted. Runs are listed oldest first by their start.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from harness.errors import HarnessError
from harness.report.reading import run_status
from rundir.errors import RunDirError
from rundir.runs import RunHeader, read_header
from rundir.turns import read_turns


@dataclass
class RunLine:
    run_dir: Path
    run_id: str
    study: str
    mode: str
    started: str
    status: str
    items_done: int  # items every arm finished every turn of
    items_planned: int
    turns_done: int
    headline: str  # per arm: turns done; and the report's outcome if there is one
    report: Path | None  # the report's HTML (or markdown), when one was written

    def cells(self) -> list[str]:
        report = str(self.report) if self.report else "-"
        return [
            self.run_id,
            self.study,
            self.mode,
            self.status,
            f"{self.items_done}/{self.items_planned}",
            self.headline,
            report,
        ]


COLUMNS = ["run", "study", "mode", "status", "items done", "headline", "report"]


def list_runs(root: Path, reports: Path) -> list[RunLine]:
    if not root.is_dir():
        raise HarnessError(f"{root} is not a folder", hint="give the folder of runs, e.g. runs/")
    found = sorted({p.parent for p in root.glob("**/run.json")})
    lines = []
    for run_dir in found:
        try:
            header = read_header(run_dir)
        except RunDirError:
            continue  # a gate's folder or a half-written header: not a run to list
        if header.kind != "study" or header.study is None:
            continue
        lines.append(_line(run_dir, header, reports))
    return sorted(lines, key=lambda r: (r.started, r.run_id))


def _line(run_dir: Path, header: RunHeader, reports: Path) -> RunLine:
    study = header.study
    assert study is not None
    # "running" is also a killed run: `harness cleanup` then `--resume` finish it.
    status = run_status(header.ended, study.model_dump())
    turns = read_turns(run_dir / "turns.jsonl")
    per_item: dict[str, Counter[str]] = {}
    for t in turns:
        per_item.setdefault(t.item, Counter())[t.arm] += 1
    # An item is done when every arm has turns of it and they all have as many as the most.
    done = sum(
        1
        for arms in per_item.values()
        if set(arms) >= set(study.arms) and len(set(arms.values())) == 1
    )
    if status != "running":
        done = len(per_item) if status == "passed" else done
    arms = Counter(t.arm for t in turns)
    headline = ", ".join(f"{arm} {arms.get(arm, 0)} turns" for arm in study.arms)
    report = _report(reports / header.run_id)
    outcome = _outcome(reports / header.run_id)
    if outcome:
        headline = f"{outcome}; {headline}"
    return RunLine(
        run_dir=run_dir,
        run_id=header.run_id,
        study=study.name,
        mode=header.mode,
        started=header.started,
        status=status,
        items_done=done,
        items_planned=study.items,
        turns_done=len(turns),
        headline=headline,
        report=report,
    )


def _report(folder: Path) -> Path | None:
    for name in ("report.html", "report.md"):
        if (folder / name).is_file():
            return folder / name
    return None


def _outcome(folder: Path) -> str | None:
    try:
        data = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    outcome = data.get("outcome") if isinstance(data, dict) else None
    return f"outcome {outcome}" if isinstance(outcome, str) else None


def index_page(lines: list[RunLine], root: Path, out: Path) -> str:
    """The static index: the same table, each report linked relative to the page."""
    from harness.report.formats import HTML_TEMPLATES

    rows = []
    for line in lines:
        link = None
        if line.report is not None:
            link = Path(_relative(line.report.resolve(), out.parent.resolve()))
        rows.append((line.cells()[:-1], str(link) if link else None))
    return HTML_TEMPLATES.get_template("runs.html.j2").render(
        root=str(root), columns=COLUMNS, rows=rows
    )


def _relative(path: Path, start: Path) -> str:
    import os

    return os.path.relpath(path, start)
