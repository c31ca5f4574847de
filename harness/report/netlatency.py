"""Section 9's latency minus the network round trip, per arm, through harness/stats/latency.py.

Each route's floor is the fastest time to first byte the run saw on it (flagged `run_minimum`:
no warm probes are in a run's files), which subtracts too little rather than too much. A turn
pays one floor per stretch of overlapping calls. Cut turns rank above every completed turn here
too, as in the raw figures (harness/report/latency.py).
"""

from __future__ import annotations

from collections import defaultdict

from harness.report.context import Context
from harness.report.latency import latency
from harness.report.model import Table, seconds
from harness.report.perarm import response_size
from harness.stats.latency import CallTiming, floors_from_calls, turn_minus_round_trip

TurnKey = tuple[str, str | None, int | None]


def net_latency(ctx: Context) -> tuple[Table, str]:
    by_turn: dict[TurnKey, list[CallTiming]] = defaultdict(list)
    timings = []
    for c in ctx.data.calls:
        timing = CallTiming(
            route=c.route,
            start=c.timing.start,
            first_byte=c.timing.first_byte,
            end=c.timing.end,
            response_bytes=response_size(c, ctx.data.response_bytes) or 0,
            arm=c.arm,
            item=c.item,
            turn=c.turn,
        )
        timings.append(timing)
        by_turn[(c.arm, c.item, c.turn)].append(timing)
    floors = floors_from_calls(timings)
    dropped = set(ctx.report.dropped_items)
    rows = []
    for name in ctx.report.arms:
        net, cut = [], 0
        for t in ctx.data.turns:
            if t.arm != name or t.item in dropped:
                continue
            if t.outcome == "cut":
                cut += 1
            elif t.outcome == "done" and t.last_token_s is not None:
                calls = by_turn.get((name, t.item, t.turn), [])
                turn = turn_minus_round_trip(name, t.item, t.turn, t.last_token_s, calls, floors)
                net.append(turn.net_last_token_s)
        figures = latency(net, cut, ctx.data.deadline_s)
        rows.append(
            [
                name,
                seconds(figures.p50_s, figures.p50_censored),
                seconds(figures.p95_s, figures.p95_censored),
            ]
        )
    table = Table(["arm", "last token minus round trips, p50", "p95"], rows)
    described = ", ".join(
        f"{route} {floor.floor_s * 1000:.1f} ms ({floor.source}, {floor.samples} calls)"
        for route, floor in sorted(floors.items())
    )
    return table, f"Round-trip floors per route: {described or 'none (no call had a first byte)'}."
