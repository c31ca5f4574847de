"""The audit's model-identity re-check (issue 25 item 5), from calls.jsonl and turns.jsonl alone.

For every answered live call whose purpose the run's `[pins.models]` pins (run.json's copy of
the study's pins), the served model is compared with the pin again (vendors.pins.served_matches):
- a mismatch is a finding (a note naming the call); the proxy must have flagged it
  `wrong_model`, and on a main call its turn must have ended `wrong_model`, else a discrepancy;
- a `wrong_model` flag on a call that matches its pin is a discrepancy too (a tampered log).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from rundir.calls import CallRecord
from rundir.runs import RunHeader
from rundir.turns import read_turns
from vendors.pins import WRONG_MODEL_FLAG, Pins, served_matches


def identity_findings(
    run_dir: Path, header: RunHeader, calls: list[tuple[int, CallRecord]]
) -> tuple[list[tuple[str, str]], list[str]]:
    """(discrepancies as (where, detail), notes) of the run's model identity."""
    if header.study is None or header.mode != "live":
        return [], []
    try:
        models = Pins.model_validate(header.study.pins).models
    except ValidationError:
        return [("run.json", "study.pins does not validate: model pins cannot be checked")], []
    if not models:
        return [], []
    path = run_dir / "turns.jsonl"
    turns = {(t.arm, t.item, t.turn): t for t in read_turns(path)} if path.exists() else {}
    found: list[tuple[str, str]] = []
    notes: list[str] = []
    for line, call in calls:
        where = f"calls.jsonl:{line} (seq {call.seq})"
        pinned = models.get(call.purpose)
        flagged = WRONG_MODEL_FLAG in call.flags
        if pinned is None or call.status != 200:
            if flagged:
                found.append((where, "flagged wrong_model, but nothing pins its purpose's model"))
            continue
        if served_matches(pinned, call.model_served):
            if flagged:
                found.append((where, f"flagged wrong_model, but {call.model_served} is {pinned}"))
            continue
        served = call.model_served or "an unnamed model"
        notes.append(
            f"model identity: seq {call.seq} ({call.purpose}, arm {call.arm}, item {call.item} "
            f"turn {call.turn}) was served by {served}, pinned {pinned}"
        )
        if not flagged:
            found.append((where, f"served by {served}, pinned {pinned}, not flagged wrong_model"))
        if call.purpose == "main" and call.item is not None and call.turn is not None:
            turn = turns.get((call.arm, call.item, call.turn))
            if turn is None or turn.outcome != "wrong_model":
                outcome = turn.outcome if turn is not None else "missing"
                turn_name = f"({call.arm}, {call.item}, turn {call.turn})"
                found.append(
                    (
                        where,
                        f"main call served by {served} (pinned {pinned}), but its turn "
                        f"{turn_name} is {outcome}, not wrong_model",
                    )
                )
    return found, notes
