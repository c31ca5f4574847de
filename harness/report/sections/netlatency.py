"""Section 9's latency minus the network round trip, per arm, through harness/stats/latency.py.

The floors come from the run's probes (rtt.jsonl, harness/run/control/rtt.py) where it has them:
- each arm's seam, `GET /health` on a warm keep-alive connection before its first turn and
  after its last: one seam round trip comes off every turn of that arm;
- in live mode each vendor's host, timed TCP handshakes: that vendor's routes get it as floor.
A route without a probe falls back to the fastest time to first byte the run saw on it
(flagged `run_minimum`), which subtracts too little rather than too much; an arm without a
seam probe has nothing taken off at the seam. The paragraph under the table says which floor
each route and arm got. A turn pays one route floor per stretch of overlapping calls. Cut
turns rank above every completed turn here too, as in the raw figures
(harness/report/figures/latency.py). Response sizes sit beside the figures.
"""

from __future__ import annotations

from collections import defaultdict

from harness.report.context import Context
from harness.report.figures import latency, response_size
from harness.report.model import Table, seconds
from harness.stats import (
    CallTiming,
    RouteFloor,
    floors_from_calls,
    round_trip_floor,
    turn_minus_round_trip,
)

TurnKey = tuple[str, str | None, int | None]


def probe_samples(ctx: Context, kind: str) -> dict[str, list[float]]:
    """target (arm or vendor) -> every sample of its probes, start and end together."""
    samples: dict[str, list[float]] = defaultdict(list)
    for probe in ctx.data.probes:
        if probe.kind == kind:
            samples[probe.target] += probe.samples_s
    return {target: taken for target, taken in samples.items() if taken}


def route_floors(ctx: Context, timings: list[CallTiming]) -> dict[str, RouteFloor]:
    floors = floors_from_calls(timings)
    upstream = probe_samples(ctx, "upstream")
    for route, vendor in {c.route: c.vendor for c in ctx.data.calls}.items():
        if vendor in upstream:
            floors[route] = round_trip_floor(route, upstream[vendor])
    return floors


def net_latency(ctx: Context) -> tuple[Table, str]:
    by_turn: dict[TurnKey, list[CallTiming]] = defaultdict(list)
    timings = []
    for c in ctx.data.calls:
        if c.phase == "ingest":
            continue  # a history session's ingestion (seam v2) is no turn's network time
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
    floors = route_floors(ctx, timings)
    seams = {arm: round_trip_floor(arm, s) for arm, s in probe_samples(ctx, "seam").items()}
    dropped = set(ctx.report.dropped_items)
    rows = []
    for name, arm in ctx.report.arms.items():
        net, cut = [], 0
        seam = seams[name].floor_s if name in seams else 0.0
        for t in ctx.data.turns:
            if t.arm != name or t.item in dropped:
                continue
            if t.outcome == "cut":
                cut += 1
            elif t.outcome == "done" and t.last_token_s is not None:
                calls = by_turn.get((name, t.item, t.turn), [])
                turn = turn_minus_round_trip(
                    name, t.item, t.turn, t.last_token_s, calls, floors, seam
                )
                net.append(turn.net_last_token_s)
        figures = latency(net, cut, ctx.data.deadline_s)
        size = arm.response_bytes
        rows.append(
            [
                name,
                seconds(figures.p50_s, figures.p50_censored),
                seconds(figures.p95_s, figures.p95_censored),
                f"{seam * 1000:.2f} ms" if name in seams else "not measured",
                "-" if size.per_call_mean is None else f"{size.per_call_mean:.0f}",
                "-" if size.per_turn_mean is None else f"{size.per_turn_mean:.0f}",
            ]
        )
    columns = ["arm", "last token minus round trips, p50", "p95", "seam round-trip",
               "response bytes/call", "response bytes/turn"]  # fmt: skip
    return Table(columns, rows), _described(ctx, floors, seams)


def _described(ctx: Context, floors: dict[str, RouteFloor], seams: dict[str, RouteFloor]) -> str:
    routes = ", ".join(
        f"{route} {floor.floor_s * 1000:.1f} ms ({floor.source}, {floor.samples} "
        f"{'calls' if floor.source == 'run_minimum' else 'handshakes'})"
        for route, floor in sorted(floors.items())
    )
    text = f"Round-trip floors per route: {routes or 'none (no call had a first byte)'}."
    failed = sorted({p.target for p in ctx.data.probes if p.error and p.kind == "upstream"})
    if failed:
        text += f" Upstream probes that failed (run_minimum used): {', '.join(failed)}."
    if seams:
        by_arm = ", ".join(
            f"{arm} {floor.floor_s * 1000:.2f} ms median of {floor.samples} "
            f"(min {min(_samples(ctx, arm)) * 1000:.2f} ms)"
            for arm, floor in sorted(seams.items())
        )
        text += (
            " Seam round trips (probe: GET /health on a warm keep-alive connection, before "
            f"each arm's first turn and after its last), one off every turn: {by_arm}."
        )
    else:
        text += " Seam round trips: not measured (no rtt.jsonl in the run): none subtracted."
    missing = [arm for arm in ctx.report.arms if arm not in seams]
    if seams and missing:
        text += f" No seam probe for {', '.join(missing)}: nothing subtracted at its seam."
    return text


def _samples(ctx: Context, arm: str) -> list[float]:
    return probe_samples(ctx, "seam")[arm]
