"""What each arm was given and did: `turns.jsonl` (one `TurnRecord` per scripted turn, and the
ingestion and snapshot lines of memory benchmarks) and `questions.jsonl` (one `QuestionRecord`
per memory benchmark question per arm).

Submodules are imported where used (not here), so importing one loads only what it needs."""

__all__ = ["ingestions", "questions", "turns"]
