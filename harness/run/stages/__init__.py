"""The pipeline's stages (harness/run/pipeline.py runs them in order): prepare checks everything and
writes run.json, start brings up the proxy, drive runs every item on every arm, finish writes the
verdict; with what prepare reads (--resume, --workers and the workers' lanes, --shard).

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

import importlib
from typing import TYPE_CHECKING, Any

from harness.run.stages.drive import drive
from harness.run.stages.finish import finish
from harness.run.stages.prepare import prepare

if TYPE_CHECKING:
    from harness.run.stages.finish import RunResult
    from harness.run.stages.prepare import Isolation, Plan, RunRequest
    from harness.run.stages.shards import resolve_shard

# What this face offers is loaded on first use (PEP 562): a user of one name loads the module
# that defines it, not the whole part (a judge's process must not load scipy).
_OFFERED = {
    "Isolation": "harness.run.stages.prepare",
    "Plan": "harness.run.stages.prepare",
    "RunRequest": "harness.run.stages.prepare",
    "RunResult": "harness.run.stages.finish",
    "resolve_shard": "harness.run.stages.shards",
}


def __getattr__(name: str) -> Any:
    if name not in _OFFERED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_OFFERED[name]), name)


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
