"""Judgment sets: what `harness judge` leaves in `--out SET`, for the report and the audit.

A set is a folder:
- `judgments.json`: the manifest (`JudgmentSet`): the runs judged, the judges' pins, the rubrics'
  and prompt templates' hashes, the seal's hash, the calibration bars, stability, the A/A control,
  each axis's status, the judgments set aside and any halt;
- `tasks.jsonl`: every prompt the stage planned (`JudgmentTask`), written before any was sent;
- `prompts/<task>.txt`: the prompt file of each task (its SHA-256 is in the task);
- `replies/<task>.<attempt>.txt`: every reply a judge gave, kept whether it was accepted or not;
- `votes.jsonl`: one `Vote` per attempt, tying a reply to its prompt and saying what was parsed,
  with the pins (engine, model, effort) of the judge asked: judges' calls are billed outside the
  run's ledger, so this log is their record;
- `exact.jsonl`: the probe answers a grading rubric settled by normalised exact match
  (`ExactMatch`), which no judge was asked about.

Replies are named in tasks only by arm codes. The codes' meaning (code -> run and arm) and the
seed they were drawn from are in the seal (`Seal`), a file stored outside the set whose SHA-256 the
manifest holds: analysis opens it (`open_seal`), and a seal that does not match is refused.

The records are in records.py, the set's files in files.py, the seal in seal.py. Submodules are
imported where used (not here), so importing one loads only what it needs."""

__all__ = ["files", "records", "seal"]
