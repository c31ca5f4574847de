"""Section 3's outcomes per arm, and the calls that belong to no turn.

The outcomes table counts every turn of every arm (dropped items included: this is what the arms
did, not the compared figures), with a column for each outcome a turn can have, so a run whose
turns failed says `error` (or cut, resource_limit, ...) where a reader looks; each arm's first
failed turn; and whether its outcomes fail the run under the study's `[verdict]` ceiling (read
from run.json, harness/checks/arm_verdict.py). The second table lists, per arm, the calls the
proxy logged while no turn of that arm ran (late calls of a cut turn, start-up and teardown
calls): they are in the arm's cost but in no per-turn figure.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

from harness.checks import (
    DEFAULT_MAX_FAILURE_RATE,
    KNOWN_OUTCOMES,
    arm_failures,
    failure_text,
    ordered,
    per_arm,
)
from harness.report.context import Context
from harness.report.model import Table, money

# Calls with no turn listed per arm; the rest are counted in one row.
UNTURNED_ROWS = 50


def outcomes_table(ctx: Context) -> Table:
    arms = per_arm(ctx.data.turns)
    seen = {o for arm in arms.values() for o in arm.outcomes}
    columns = [*KNOWN_OUTCOMES, *(o for o in ordered(seen) if o not in KNOWN_OUTCOMES)]
    # A merged run's failures as its shards found them (rundir/merge/join.py: "in shard I/N: why"):
    # an arm that failed one shard may pass the pooled turns' ceiling, and still failed the run.
    failing = {**_shard_failures(ctx), **arm_failures(arms, _ceiling(ctx))}
    rows = []
    for name, arm in arms.items():
        first = "-"
        if arm.first is not None:
            t = arm.first
            first = f"{ctx.anon.item(t.item)} turn {t.turn}: {failure_text(t)}"
        verdict = f"FAILS the run: {failing[name].split(';')[0]}" if name in failing else "ok"
        rows.append(
            [
                name,
                str(arm.turns),
                *(str(arm.outcomes[o]) for o in columns),
                str(arm.memory_miss),
                first,
                verdict,
            ]
        )
    head = ["arm", "turns", *columns, "memory miss", "first failed turn", "verdict"]
    return Table(head, rows)


def unturned_calls(ctx: Context) -> Table | None:
    outside = [c for c in ctx.data.calls if c.item is None or c.turn is None]
    if not outside:
        return None
    rows: list[list[str]] = []
    for arm in sorted({c.arm for c in outside}):
        calls = sorted((c for c in outside if c.arm == arm), key=lambda c: (c.run_id, c.seq))
        for c in calls[:UNTURNED_ROWS]:
            rows.append(
                [
                    arm,
                    ctx.anon.run(c.run_id),
                    str(c.seq),
                    _when(c.timing.start),
                    c.purpose,
                    c.model_served or c.model_requested or "-",
                    str(c.status),
                    c.outcome,
                    money(c.cost_usd),
                ]
            )
        if len(calls) > UNTURNED_ROWS:
            more = calls[UNTURNED_ROWS:]
            spent = money(sum((c.cost_usd for c in more), Decimal(0)))
            rows.append([arm, "-", f"{len(more)} more", "-", "-", "-", "-", "-", spent])
    columns = ["arm", "run", "call", "time (UTC)", "purpose", "model", "status", "outcome", "cost"]
    return Table(columns, rows)


def _shard_failures(ctx: Context) -> dict[str, str]:
    out: dict[str, str] = {}
    for header in ctx.data.headers:
        study = header.get("study") or {}
        if study.get("merged_from"):
            out.update({str(a): str(why) for a, why in (study.get("arm_failures") or {}).items()})
    return out


def _ceiling(ctx: Context) -> float:
    declared = ctx.data.study.get("max_failure_rate")
    return float(declared) if declared is not None else DEFAULT_MAX_FAILURE_RATE


def _when(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
