"""Turns of an arm that met one of its bounds (pids, memory, disk: rundir/runs/limits.py).

The backend says which bound an arm met, from the host's own evidence (harness/isolation/
docker/limits.py); the orchestrator asks after every turn, and before it calls a dead arm a
failure of the machinery (an OOM-killed arm is the arm's failure, not a reason to retry). The
turn gets the outcome `resource_limit` naming the arm and the bound (its partial answer kept),
the item's later turns are not run (the session's state is gone or untrustworthy) and are
recorded the same way, and the arm is replaced by a fresh one before anything else runs, so a
fork bomb's leftovers do not slow the other arms.
"""

from __future__ import annotations

from arms.client import TurnResult
from harness.run.turns.turn_records import AttemptRecords
from rundir.runs import ResourceLimits
from rundir.turns import TurnRecord


def _bound(name: str, limits: ResourceLimits) -> str:
    if name == "pids":
        return f"pids limit ({limits.pids})"
    if name in ("memory", "disk"):
        size = getattr(limits, name) / 1024**2
        return f"{name} limit ({size:g} MiB)"
    return f"{name} limit"


def describe(arm: str, met: list[str], limits: ResourceLimits) -> str:
    """`arm 'bomb' hit its pids limit (64)`: the one line turns.jsonl and the summary show."""
    return f"arm {arm!r} hit its {' and '.join(_bound(m, limits) for m in met)}"


def limit_records(
    records: AttemptRecords,
    number: int,
    turns: int,
    why: str,
    result: TurnResult | None = None,
) -> list[TurnRecord]:
    """The turn that met the bound (its answer so far, if any) and the item's turns after it."""
    if result is not None:
        record = records.answered(number, result)
        record.outcome, record.error = "resource_limit", why
    else:
        record = records.failed(number, "resource_limit", why)
    later = [
        records.failed(n, "resource_limit", f"not run: {why} in turn {number}")
        for n in range(number + 1, turns)
    ]
    return [record, *later]
