"""The audit's re-check of the study's output guard (harness/guard.py, issue 34 item 2), from
turns.jsonl, calls.jsonl and the study file run.json names.

- where the study has a `[guard]` (its study file, still the one run.json hashed, says so; or the
  run's own turns or calls show one), every turn with text carries a verdict: a verdict deleted
  from turns.jsonl, or a guard skipped, is a discrepancy naming the turn;
- a verdict is pass, fail or error with a reason only where the guard gave one (the model's rule);
- the guard's own calls (purpose `guard`) are noted with their cost: they are re-priced by the
  `cost` check and matched to the ledger by `ledger_sum` like every other call.
"""

from __future__ import annotations

import hashlib
import tomllib
from decimal import Decimal
from pathlib import Path

from pydantic import ValidationError

from rundir.calls import CallRecord
from rundir.runs import RunHeader
from rundir.turns import read_turns

GUARD_PURPOSE = "guard"  # harness/guard.py's purpose (checks read files, not the guard)


def study_has_guard(header: RunHeader) -> bool | None:
    """Whether the run's study file has a `[guard]`; None when that file is gone or changed
    since the run (its SHA-256 is not run.json's), so it cannot say."""
    study = header.study
    if study is None:
        return None
    try:
        raw = Path(study.study_path).read_bytes()
    except OSError:
        return None
    if hashlib.sha256(raw).hexdigest() != study.study_sha256:
        return None
    try:
        return "guard" in tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None


def guard_findings(
    run_dir: Path, header: RunHeader, calls: list[tuple[int, CallRecord]]
) -> tuple[list[tuple[str, str]], list[str]]:
    """Discrepancies as (where, detail), and notes, on the guard's verdicts and calls."""
    path = run_dir / "turns.jsonl"
    try:
        turns = read_turns(path) if path.exists() else []
    except (OSError, ValueError, ValidationError):
        return [], []  # an unreadable turns.jsonl is the `file` check's to name
    guard_calls = [c for _, c in calls if c.purpose == GUARD_PURPOSE]
    shown = any(t.guard is not None for t in turns) or bool(guard_calls)
    declared = study_has_guard(header)
    notes: list[str] = []
    if guard_calls:
        spent = sum((c.cost_usd for c in guard_calls), Decimal(0))
        notes.append(
            f"guard: {len(guard_calls)} call(s) with purpose guard, ${spent.normalize():f}, "
            "re-priced and matched to the ledger with the others"
        )
    if not (declared or (declared is None and shown)):
        return [], notes
    found = [
        (
            f"turns.jsonl:{n} ({t.arm}, {t.item}, turn {t.turn})",
            "the study has a [guard] but this turn's text carries no guard verdict",
        )
        for n, t in enumerate(turns, 1)
        if t.text and t.guard is None
    ]
    if declared is None:
        notes.append("guard: the study file is gone or changed; its [guard] read from the run")
    return found, notes
