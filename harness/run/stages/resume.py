"""`--resume RUN_DIR`: run only what a stopped run left undone, as a new run.

A run stopped by Ctrl-C, a crash or an infrastructure failure keeps every turn it finished in
turns.jsonl. Resuming starts a new run of the same study (its own run id, call log and ledger
reservation, so every run stays self-contained, auditable and replayable) that skips each
(item, arm) the stopped run recorded in full, none of it an infrastructure failure. The new run's
header names the run it resumes; resuming a resumed run skips what the whole chain finished, so
a chain of resumes covers the study once and no finished pair is paid for twice in live mode.
An item `harness void` set aside in a run (rundir/runs/voids.py) is not finished there: resuming
that run reruns it in every arm, and the report given both runs shows the difference.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from harness.errors import HarnessError
from harness.study import Item, Study
from rundir.errors import RunDirError
from rundir.jsonlines import read_lines
from rundir.runs import VOIDS_FILE, RunHeader, read_header, voided_items
from rundir.turns import TurnRecord

Pair = tuple[str, str]  # (item id, arm)


@dataclass(frozen=True)
class Resumption:
    source: Path  # the run directory resumed
    done: frozenset[Pair]  # what the chain of runs finished


def resumption(source: Path, study: Study, mode: str, items: list[Item]) -> Resumption:
    """What the stopped run `source` (and the runs it resumed) finished; raises HarnessError
    when `source` is not a run of this very study in this mode."""
    done: set[Pair] = set()
    seen: set[Path] = set()
    run: Path | None = source
    while run is not None and run.resolve() not in seen:
        seen.add(run.resolve())
        header = _header(run)
        _check_same_study(run, header, study, mode)
        voided = _voided(run)
        done |= {p for p in finished_pairs(turn_records(run), items) if p[0] not in voided}
        previous = header.study.resumed_from if header.study else None
        run = Path(previous) if previous else None
    return Resumption(source=source, done=frozenset(done))


def finished_pairs(records: list[TurnRecord], items: list[Item]) -> set[Pair]:
    """(item, arm) pairs with a record for every scripted turn and no infrastructure failure."""
    wanted = {item.id: len(item.turns) for item in items}
    counts = Counter((r.item, r.arm) for r in records)
    broken = {(r.item, r.arm) for r in records if r.outcome == "infra_failed"}
    return {
        pair
        for pair, count in counts.items()
        if pair[0] in wanted and count >= wanted[pair[0]] and pair not in broken
    }


def _header(run: Path) -> RunHeader:
    try:
        return read_header(run)
    except RunDirError as e:
        raise HarnessError(f"--resume {run}: {e.message}", hint=e.hint) from None


def _check_same_study(run: Path, header: RunHeader, study: Study, mode: str) -> None:
    previous = header.study
    if header.kind != "study" or previous is None:
        raise HarnessError(f"--resume {run}: not a study run (a `harness proxy serve` run?)")
    if header.mode != mode:
        raise HarnessError(
            f"--resume {run}: that run was `harness {header.mode}`, not `harness {mode}`",
            hint=f"resume it with `harness {header.mode}`",
        )
    changed = [
        name
        for name, then, now in (
            ("study file", previous.study_sha256, study.study_sha256),
            ("compose file", previous.compose_sha256, study.compose_sha256),
            ("items file", previous.items_sha256, study.items_sha256),
        )
        if then != now
    ]
    if changed:
        raise HarnessError(
            f"--resume {run}: the {', '.join(changed)} changed since that run",
            hint="a resumed run must run the same study; start a new run instead",
        )


def _voided(run: Path) -> set[str]:
    try:
        return set(voided_items(run))
    except ValueError as e:  # json's and pydantic's errors
        raise HarnessError(
            f"--resume {run}: {VOIDS_FILE} does not parse: {str(e).splitlines()[0]}",
            hint=f"run `harness audit {run}`",
        ) from None


def turn_records(run: Path) -> list[TurnRecord]:
    """The run's turn records; a torn last line (the harness was killed mid-write) is skipped,
    since its turn then counts as not finished and runs again."""
    path = run / "turns.jsonl"
    records: list[TurnRecord] = []
    if not path.exists():
        return records
    for line in read_lines(path):
        if not line.strip():
            continue
        try:
            records.append(TurnRecord.model_validate(json.loads(line)))
        except (ValueError, ValidationError):
            continue
    return records
