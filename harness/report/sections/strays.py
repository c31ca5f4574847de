"""Section 3's refused connections: each destination an arm tried, how often, and when.

From egress.jsonl (every refused attempt: arm, destination, source), strays_seen.jsonl (the
turn the orchestrator was running when it first saw each one) and run.json's
`teardown_strays` (the attempts made after the arm's last turn: harness/run/watch/strays.py). An
attempt is placed, in this order: in the arm's own turn that saw it ("item 3 turn 1"), at
start-up (while the arms started), at teardown, and otherwise "between its turns" (seen while
another arm ran, before this arm's last turn). A destination is host:port, IP:port, or the name
an arm looked up (DNS refusals).
"""

from __future__ import annotations

from collections import Counter

from harness.report.context import Context
from harness.report.model import Table

Pair = tuple[str, str]  # arm, destination


def refused_table(ctx: Context) -> Table:
    totals: Counter[Pair] = Counter()
    for e in ctx.data.egress:  # a line of egress.jsonl may fold several attempts (`count`)
        totals[(str(e.get("arm")), str(e.get("destination")))] += int(e.get("count") or 1)
    placed: dict[Pair, Counter[str]] = {pair: Counter() for pair in totals}
    for seen in ctx.data.strays_seen:
        pair = (seen.arm, seen.destination)
        if pair not in placed:
            continue
        if seen.during == "start-up":
            placed[pair]["start-up"] += seen.count
        elif seen.running_arm == seen.arm and seen.item is not None:
            placed[pair][f"{ctx.anon.item(seen.item)} turn {seen.turn}"] += seen.count
    for h in ctx.data.headers:
        teardown = (h.get("study") or {}).get("teardown_strays") or {}
        for arm, destinations in teardown.items():
            for destination, n in destinations.items():
                if (arm, destination) in placed:
                    placed[(arm, destination)]["teardown"] += int(n)
    rows = []
    for (arm, destination), total in sorted(totals.items()):
        when = placed[(arm, destination)]
        rest = total - sum(when.values())
        if rest > 0:
            when["between its turns"] += rest
        shown = "; ".join(f"{label} ×{n}" for label, n in when.items())
        rows.append([arm, destination, str(total), shown])
    return Table(["arm", "refused destination", "attempts", "when"], rows)


def stray_turns(ctx: Context) -> Counter[str]:
    """Per arm, the turns whose outcome is `stray_connection` (a refused connection halted
    the run in them)."""
    return Counter(t.arm for t in ctx.data.turns if t.outcome == "stray_connection")
