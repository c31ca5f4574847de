"""What each arm was given and did: `turns.jsonl` (one `TurnRecord` per scripted turn, and the
ingestion and snapshot lines of memory benchmarks) and `questions.jsonl` (one `QuestionRecord`
per memory benchmark question per arm).

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rundir.turns.ingestions import (
        IngestionRecord,
        IngestOutcome,
        SnapshotRecord,
        read_ingestions,
    )
    from rundir.turns.questions import QuestionLog, QuestionRecord, read_questions
    from rundir.turns.turns import TurnLog, TurnOutcome, TurnRecord, addon_sha256, read_turns

# What this face offers is loaded on first use (PEP 562): a user of one name loads the module
# that defines it, not the whole part (a judge's process must not load scipy).
_OFFERED = {
    "IngestOutcome": "rundir.turns.ingestions",
    "IngestionRecord": "rundir.turns.ingestions",
    "QuestionLog": "rundir.turns.questions",
    "QuestionRecord": "rundir.turns.questions",
    "SnapshotRecord": "rundir.turns.ingestions",
    "TurnLog": "rundir.turns.turns",
    "TurnOutcome": "rundir.turns.turns",
    "TurnRecord": "rundir.turns.turns",
    "addon_sha256": "rundir.turns.turns",
    "read_ingestions": "rundir.turns.ingestions",
    "read_questions": "rundir.turns.questions",
    "read_turns": "rundir.turns.turns",
}


def __getattr__(name: str) -> Any:
    if name not in _OFFERED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_OFFERED[name]), name)


__all__ = [
    "IngestOutcome",
    "IngestionRecord",
    "QuestionLog",
    "QuestionRecord",
    "SnapshotRecord",
    "TurnLog",
    "TurnOutcome",
    "TurnRecord",
    "addon_sha256",
    "read_ingestions",
    "read_questions",
    "read_turns",
]
