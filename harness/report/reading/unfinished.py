"""Whether the runs a report reads are finished, and how far they got.

A run's header is filled in at its end (rundir/runs/header.py: `ended`, and the study's `passed`);
while the run goes on, or after the harness was killed, both are missing, and a run stopped by a
signal or a stray connection says so (`interrupted`, `halted`). A report of such a run would
read like a finished one (half the turns with verdict "ok", or an empty table), so
`harness report` refuses it unless asked (`--partial`), and then says so on its first screen and
in section 12, with turns done of planned. Of several run directories (a stopped run and the runs
that resumed it) the last decides: a resume that finished finishes the study.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.errors import HarnessError
from harness.report.reading.rundata import RunData
from harness.report.reading.script import study_items


@dataclass
class Progress:
    run_id: str
    state: str  # finished, running or killed, interrupted, halted
    turns_done: int
    turns_planned: int | None  # None when the study file cannot be read back
    items_begun: int
    items_planned: int

    @property
    def finished(self) -> bool:
        return self.state == "finished"

    def done_of_planned(self) -> str:
        if self.turns_planned is not None:
            return f"{self.turns_done} of {self.turns_planned} planned turns done"
        return (
            f"{self.turns_done} turns done; {self.items_begun} of {self.items_planned} planned "
            "items begun"
        )

    def sentence(self) -> str:
        return (
            f"UNFINISHED: run {self.run_id} is {self.state} ({self.done_of_planned()}); every "
            "figure below is of the turns done so far, not of the study."
        )


def run_status(ended: object, study: dict[str, Any]) -> str:
    """running (no end yet: it runs, or was killed), halted, interrupted, passed or failed: what
    a run's header says of it (`ended`, and its study part as a dict). The report and
    `harness runs` both read a run's status here."""
    if ended is None or study.get("passed") is None:
        return "running"
    if study.get("halted"):
        return "halted"
    if study.get("interrupted"):
        return "interrupted"
    return "passed" if study["passed"] else "failed"


def progress(data: RunData) -> Progress:
    header = data.headers[-1]
    study: dict[str, Any] = dict(header.get("study") or {})
    state = {
        "running": "running or killed (its run.json was never finished)",
        "halted": f"halted ({study.get('halted')})",
        "interrupted": "interrupted",
    }.get(run_status(header.get("ended"), study), "finished")
    arms = [str(a) for a in study.get("arms") or []]
    items_planned = int(study.get("items") or 0)
    return Progress(
        run_id=str(header.get("run_id", data.run_dirs[-1].name)),
        state=state,
        turns_done=len(data.turns),
        turns_planned=_turns_planned(study, len(arms)),
        items_begun=len({t.item for t in data.turns}),
        items_planned=items_planned,
    )


def refuse_unless_partial(progress: Progress, partial: bool) -> None:
    if not progress.finished and not partial:
        raise HarnessError(
            f"run {progress.run_id} is not finished: it is {progress.state}, "
            f"{progress.done_of_planned()}",
            hint="wait for it to end, resume it (harness record --resume), or pass --partial "
            "for a report marked unfinished",
        )


def _turns_planned(study: dict[str, Any], arms: int) -> int | None:
    # The planned turns are the study's items' turns, once per arm; a shard's items are a part
    # of them that run.json does not list, so a shard gives items, not turns.
    if study.get("shard") or not arms:
        return None
    items = study_items(study)
    return None if items is None else sum(len(item.turns) for item in items) * arms
