"""What each arm was given and did: `turns.jsonl` (one `TurnRecord` per scripted turn, and the
ingestion and snapshot lines of memory benchmarks) and `questions.jsonl` (one `QuestionRecord`
per memory benchmark question per arm).

What other parts use is imported here and listed in `__all__`: they import it from this face,
never from a module inside (tests/test_layout.py holds that)."""

from rundir.turns.ingestions import IngestionRecord, IngestOutcome, SnapshotRecord, read_ingestions
from rundir.turns.questions import QuestionLog, QuestionRecord, read_questions
from rundir.turns.turns import TurnLog, TurnOutcome, TurnRecord, addon_sha256, read_turns

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
