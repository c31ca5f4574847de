"""Everything the section builders read, in one object, and how each names the files it read."""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.report.figures import RunReport
from harness.report.public import Anonymizer
from harness.report.reading import Inputs, ReadFile, RunData


@dataclass
class ConfirmedRow:
    contrast: str
    endpoint: str
    metric: str
    estimate: float | None
    low: float | None
    high: float | None
    status: str
    n: int
    planned_n: int


@dataclass
class Confirmed:
    outcome: str  # GO, PORT, KILL, NO VERDICT, ...
    why: str  # the rule that fired, as the plan states it
    rows: list[ConfirmedRow] = field(default_factory=list)
    gates: dict[str, str] = field(default_factory=dict)  # validity gate -> reading
    ceilings: dict[str, str] = field(default_factory=dict)  # ceiling -> reading


@dataclass
class Context:
    data: RunData
    inputs: Inputs
    report: RunReport
    anon: Anonymizer
    resamples: int
    seed: int
    # Section 7's outcome and confirmatory rows (harness/report/confirmatory/section.py), for the
    # first screen and report.json: computed once, read by both.
    confirmed: Confirmed | None = None

    def describe(self, file: ReadFile) -> str:
        return f"{self.anon.path(file.kind, file.path)} (SHA-256 {file.sha256}, {file.size} bytes)"

    def run_files(self, *kinds: str) -> list[str]:
        return [self.describe(f) for f in self.data.read if f.kind in kinds]

    def input_file(self, kind: str) -> list[str]:
        file = self.inputs.given(kind)
        return [self.describe(file)] if file else []
