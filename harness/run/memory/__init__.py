"""A memory benchmark's question on an arm (seam v2): the memory stage (ingestion, health, the
snapshot for each question, memory_stage.py), the arm stopped so its state folder can be
snapshotted, the snapshot copied back for each question, and each question's record with its
answer-or-abstain score (NET).

Submodules are imported where used (not here), so importing one loads only what it
needs."""

__all__ = [
    "arm_stop",
    "memory_stage",
    "net_score",
    "question_records",
    "snapshot",
]
