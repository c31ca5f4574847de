"""One study run end to end, in four stages that each own their files.

prepare (harness/run/prepare.py): the checks, the run directory and its header, run.json;
start (start.py): the proxy up, and everything that started down again at the end;
drive (drive.py): every item's turns through every arm, into turns.jsonl;
finish (finish.py): the strays, memory controls and verdict, and the manifest in run.json.
Each stage hands the next what it needs, so none goes back into another's files
(`python -m bench.flow_bench` measures the path).
"""

from __future__ import annotations

from harness.run.drive import drive
from harness.run.finish import RunResult, finish
from harness.run.prepare import Isolation, RunRequest, prepare

__all__ = ["Isolation", "RunRequest", "RunResult", "run_study"]


def run_study(request: RunRequest) -> RunResult:
    """Everything that can be checked is checked before a process starts."""
    plan = prepare(request)
    return finish(plan, drive(plan))
