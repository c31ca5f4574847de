"""The study's output guard per arm (harness/guard.py, issue 34 item 2): how many of the arm's
turns the guard passed, failed or could not judge (`error`, never a pass), and what its own model
calls (purpose `guard`) cost. Those calls are booked on the arm whose text they checked, so the
arm's `cost_usd` includes them; `cost_usd` here says how much of it was the guard's."""

from __future__ import annotations

from decimal import Decimal

from pydantic import BaseModel, ConfigDict

from harness.report.model import Table, money
from rundir.calls import CallRecord
from rundir.turns import TurnRecord

GUARD_PURPOSE = "guard"  # as harness/guard.py names it (the report reads files, not the guard)


class GuardTally(BaseModel):
    model_config = ConfigDict(extra="forbid")

    passed: int = 0
    failed: int = 0
    errored: int = 0
    unjudged: int = 0  # turns with text but no verdict (a run whose guard was skipped)
    calls: int = 0
    cost_usd: Decimal = Decimal(0)


def guard_tally(turns: list[TurnRecord], calls: list[CallRecord]) -> GuardTally | None:
    """One arm's tally; None when nothing in its turns or calls shows a guard."""
    verdicts = [t.guard for t in turns]
    mine = [c for c in calls if c.purpose == GUARD_PURPOSE]
    if not mine and all(v is None for v in verdicts):
        return None
    return GuardTally(
        passed=verdicts.count("pass"),
        failed=verdicts.count("fail"),
        errored=verdicts.count("error"),
        unjudged=sum(t.guard is None and bool(t.text) for t in turns),
        calls=len(mine),
        cost_usd=sum((c.cost_usd for c in mine), Decimal(0)),
    )


def guard_table(tallies: dict[str, GuardTally | None]) -> Table | None:
    """Section 3's guard table, one row per arm; None when the run shows no guard."""
    if all(t is None for t in tallies.values()):
        return None
    rows = [
        [name, *(str(n) for n in (t.passed, t.failed, t.errored, t.unjudged, t.calls)),
         money(t.cost_usd)]
        if t is not None
        else [name, "0", "0", "0", "0", "0", money(Decimal(0))]
        for name, t in tallies.items()
    ]  # fmt: skip
    columns = ["arm", "guard passed", "guard failed", "guard error", "no verdict",
               "guard calls", "guard cost"]  # fmt: skip
    return Table(columns, rows)
