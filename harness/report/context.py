"""Everything the section builders read, in one object, and how each names the files it read."""

from __future__ import annotations

from dataclasses import dataclass

from harness.report.inputs import Inputs
from harness.report.perarm import RunReport
from harness.report.public import Anonymizer
from harness.report.rundata import ReadFile, RunData


@dataclass
class Context:
    data: RunData
    inputs: Inputs
    report: RunReport
    anon: Anonymizer
    resamples: int
    seed: int

    def describe(self, file: ReadFile) -> str:
        return f"{self.anon.path(file.kind, file.path)} (SHA-256 {file.sha256}, {file.size} bytes)"

    def run_files(self, *kinds: str) -> list[str]:
        return [self.describe(f) for f in self.data.read if f.kind in kinds]

    def input_file(self, kind: str) -> list[str]:
        file = self.inputs.given(kind)
        return [self.describe(file)] if file else []
