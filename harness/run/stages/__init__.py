"""The pipeline's stages (harness/run/pipeline.py runs them in order): prepare checks everything and
writes run.json, start brings up the proxy, drive runs every item on every arm, finish writes the
verdict; with what prepare reads (--resume, --workers and the workers' lanes, --shard).

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

from harness.run.stages.drive import drive
from harness.run.stages.finish import RunResult, finish
from harness.run.stages.prepare import Isolation, Plan, RunRequest, prepare
from harness.run.stages.shards import resolve_shard

__all__ = [
    "Isolation",
    "Plan",
    "RunRequest",
    "RunResult",
    "drive",
    "finish",
    "prepare",
    "resolve_shard",
]
