"""A memory benchmark's question on an arm (seam v2): the memory stage (ingestion, health, the
snapshot for each question, memory_stage.py), the arm stopped so its state folder can be
snapshotted, the snapshot copied back for each question, and each question's record with its
answer-or-abstain score (NET).

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.run.memory.arm_stop import stop_arm
    from harness.run.memory.memory_stage import MemoryStage, Prepared, state_env
    from harness.run.memory.net_score import DEFAULT_LAMBDA
    from harness.run.memory.question_records import QuestionRecorder
    from harness.run.memory.snapshot import SnapshotError

# What this face offers is loaded on first use (PEP 562): a user of one name loads the module
# that defines it, not the whole part (a judge's process must not load scipy).
_OFFERED = {
    "DEFAULT_LAMBDA": "harness.run.memory.net_score",
    "MemoryStage": "harness.run.memory.memory_stage",
    "Prepared": "harness.run.memory.memory_stage",
    "QuestionRecorder": "harness.run.memory.question_records",
    "SnapshotError": "harness.run.memory.snapshot",
    "state_env": "harness.run.memory.memory_stage",
    "stop_arm": "harness.run.memory.arm_stop",
}


def __getattr__(name: str) -> Any:
    if name not in _OFFERED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_OFFERED[name]), name)


__all__ = [
    "DEFAULT_LAMBDA",
    "MemoryStage",
    "Prepared",
    "QuestionRecorder",
    "SnapshotError",
    "state_env",
    "stop_arm",
]
