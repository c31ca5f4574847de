"""A memory benchmark's question on an arm (seam v2): the memory stage (ingestion, health, the
snapshot for each question, memory_stage.py), the arm stopped so its state folder can be
snapshotted, the snapshot copied back for each question, and each question's record with its
answer-or-abstain score (NET).

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

from harness.run.memory.arm_stop import stop_arm
from harness.run.memory.memory_stage import MemoryStage, Prepared, state_env
from harness.run.memory.net_score import DEFAULT_LAMBDA
from harness.run.memory.question_records import QuestionRecorder
from harness.run.memory.snapshot import SnapshotError

__all__ = [
    "DEFAULT_LAMBDA",
    "MemoryStage",
    "Prepared",
    "QuestionRecorder",
    "SnapshotError",
    "state_env",
    "stop_arm",
]
