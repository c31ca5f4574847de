"""report.json: everything the report states, for a machine: the per-arm figures (schema 2's
`RunReport`), and since schema 3 the outcome and its rule, the confirmatory verdicts, the validity
gates' and ceilings' readings, each arm's score per metric with its interval, whether the runs
are finished, and each section with why it was not run. Its fields are in docs/formats.md."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from harness.report.context import Confirmed
from harness.report.figures import RunReport
from harness.report.model import Section
from harness.report.reading import Progress
from harness.report.sections import FirstScreen

REPORT_FILE_SCHEMA = 3  # 3: outcome, verdicts, gates, ceilings, results, progress, sections


class VerdictEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    contrast: str
    endpoint: str
    metric: str
    estimate: float | None  # + = the candidate better
    low: float | None
    high: float | None
    status: str  # BETTER, NON-INFERIOR, WORSE, NOT SHOWN, ...
    n: int
    planned_n: int


class ScoreEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    mean: float
    low: float  # 95% percentile cluster bootstrap
    high: float
    n: int


class ProgressEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    finished: bool
    state: str
    turns_done: int
    turns_planned: int | None
    items_begun: int
    items_planned: int


class SectionEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    number: int
    title: str
    not_run: str | None


class ReportFile(RunReport):
    """The whole of report.json: the per-arm figures, then what the first screen states."""

    schema_: int = Field(REPORT_FILE_SCHEMA, alias="schema")
    # GO, GO-COST, PORT, KILL, NOT SHOWN or NO VERDICT; None when no --analysis plan was given.
    outcome: str | None = None
    rule: str | None = None  # why: the decision rule that fired, as the plan states it
    # The first screen's notes: a record-mode outcome is of stub answers; an unfinished run.
    notes: list[str] = Field(default_factory=list)
    # Each contrast and endpoint of the plan: effect (+ = candidate better), interval, status.
    # Empty at an interim look that continues (it reveals only stop or continue).
    verdicts: list[VerdictEntry] = Field(default_factory=list)
    gates: dict[str, str] = Field(default_factory=dict)  # validity gate -> its reading
    ceilings: dict[str, str] = Field(default_factory=dict)  # ceiling -> held, broken, not read
    # Per arm, per "metric (scale)": the mean of its judgments with section 6's interval.
    results: dict[str, dict[str, ScoreEntry]] = Field(default_factory=dict)
    progress: ProgressEntry | None = None  # whether the runs finished; turns done of planned
    sections: list[SectionEntry] = Field(default_factory=list)  # each section, and why not run


def report_file(
    report: RunReport,
    screen: FirstScreen,
    confirmed: Confirmed | None,
    progress: Progress,
    sections: list[Section],
) -> ReportFile:
    return ReportFile(
        **report.model_dump(by_alias=False, exclude={"schema_"}),
        outcome=screen.outcome,
        rule=screen.rule,
        notes=screen.notes,
        verdicts=[VerdictEntry(**vars(r)) for r in (confirmed.rows if confirmed else [])],
        gates=confirmed.gates if confirmed else {},
        ceilings=confirmed.ceilings if confirmed else {},
        results={
            a.arm: {m: ScoreEntry(**vars(s)) for m, s in a.scores.items()}
            for a in screen.arms
            if a.scores
        },
        progress=ProgressEntry(finished=progress.finished, **_progress_fields(progress)),
        sections=[
            SectionEntry(number=s.number, title=s.title, not_run=s.not_run) for s in sections
        ],
    )


def _progress_fields(progress: Progress) -> dict[str, object]:
    fields = dict(vars(progress))
    fields.pop("run_id")
    return fields
