"""Reuse hits in the report's cost section (issue 25 item 3): how many follower main calls the
proxy answered with their leader's reply (`reuse_of` in calls.jsonl; proxy/flow/reuse.py), and
the dollars saved, which are what the reused leader calls cost (each pair is booked once)."""

from __future__ import annotations

from collections import Counter
from decimal import Decimal

from harness.report.context import Context
from harness.report.model import money


def reuse_line(ctx: Context) -> str:
    calls = ctx.data.calls
    by_seq = {(c.run_id, c.seq): c for c in calls}
    hits = [c for c in calls if c.reuse_of is not None]
    if not hits:
        return "Reuse hits: none (no follower's main call was answered with its leader's reply)."
    pairs: Counter[tuple[str, str]] = Counter()
    saved = Decimal(0)
    unmatched = 0
    for hit in hits:
        leader = by_seq.get((hit.run_id, hit.reuse_of or 0))
        if leader is None:
            unmatched += 1
            continue
        pairs[(leader.arm, hit.arm)] += 1
        saved += leader.cost_usd
    named = ", ".join(f"{f} from {lead} {n}" for (lead, f), n in sorted(pairs.items()))
    missing = f"; {unmatched} name a leader call not in the log" if unmatched else ""
    return (
        f"Reuse hits: {len(hits)} follower main call(s) answered with their leader's reply, "
        f"booked once at cost 0 ({named}{missing}); saved {money(saved)}, what the leaders' "
        "reused calls cost."
    )
