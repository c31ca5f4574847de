"""Latency minus the network round trip, per call and per turn, with the response size beside it.

A vendor far away adds the same round trip to every arm's every call, and more to an arm that
makes more calls in sequence: reported raw, that distance swamps what the arms themselves cost.
So each route (e.g. `openai.chat`) gets a round-trip floor and it is subtracted:

- the floor is measured on a warm connection (no TCP/TLS setup in it): the median of the probe
  samples given, robust to one slow probe. Without probes the floor falls back to the fastest
  time to first byte the run itself saw on that route, which still holds the vendor's quickest
  reply and so subtracts too little rather than too much; it is flagged `run_minimum`.
- a call's figure is its time to first byte and its total time, each minus its route's floor,
  never below 0. A route with no floor gets no net figure (None), never a floor of 0 silently.
- a turn pays one floor per stretch of calls that were in flight together (overlapping calls
  share their round trips; calls in sequence each pay their own), the largest floor of the
  stretch, plus one round trip of the seam itself (orchestrator to arm, measured the same way,
  0 when it was not). The turn's last-token latency minus those floors is its net latency.

Response size sits beside every figure: a call that streams 20 kB is slower for it, not worse.
Inputs are plain numbers so any run's call log feeds them: from a `calls.jsonl` record, start =
`timing.start`, first_byte = `timing.first_byte`, end = `timing.end`, response_bytes = the sum of
`response_chunks` (streamed) or the length of the stored response body.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict


class CallTiming(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    route: str
    start: float  # epoch seconds
    first_byte: float | None
    end: float | None
    response_bytes: int = 0
    arm: str | None = None
    item: str | None = None
    turn: int | None = None


class RouteFloor(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    route: str
    floor_s: float
    samples: int
    source: Literal["probe", "run_minimum"]


class NetCall(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    call: CallTiming
    floor_s: float | None
    first_byte_s: float | None  # time to first byte minus the floor
    total_s: float | None  # total time minus the floor
    response_bytes: int


class NetTurn(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    arm: str
    item: str
    turn: int
    calls: int
    response_bytes: int
    round_trips_s: float  # the floors this turn paid, the seam's included
    last_token_s: float
    net_last_token_s: float
    # Calls on a route without a floor: their round trips could not be taken off.
    unfloored_calls: int = 0


def round_trip_floor(route: str, warm_samples: Sequence[float]) -> RouteFloor:
    """The floor of a route from round trips measured on a warm connection."""
    samples = [float(s) for s in warm_samples]
    if not samples or any(s < 0 for s in samples):
        raise ValueError(f"route {route}: the floor needs one or more non-negative round trips")
    return RouteFloor(
        route=route, floor_s=statistics.median(samples), samples=len(samples), source="probe"
    )


def floors_from_calls(calls: Iterable[CallTiming]) -> dict[str, RouteFloor]:
    """Fallback floors: the fastest time to first byte the run saw on each route."""
    fastest: dict[str, list[float]] = {}
    for call in calls:
        if call.first_byte is not None:
            fastest.setdefault(call.route, []).append(call.first_byte - call.start)
    return {
        route: RouteFloor(
            route=route, floor_s=max(0.0, min(seen)), samples=len(seen), source="run_minimum"
        )
        for route, seen in fastest.items()
    }


def minus_round_trip(
    calls: Iterable[CallTiming], floors: Mapping[str, RouteFloor]
) -> list[NetCall]:
    out = []
    for call in calls:
        floor = floors[call.route].floor_s if call.route in floors else None
        out.append(
            NetCall(
                call=call,
                floor_s=floor,
                first_byte_s=_net(call.first_byte, call.start, floor),
                total_s=_net(call.end, call.start, floor),
                response_bytes=call.response_bytes,
            )
        )
    return out


def _net(moment: float | None, start: float, floor: float | None) -> float | None:
    if moment is None or floor is None:
        return None
    return max(0.0, moment - start - floor)


def turn_minus_round_trip(
    arm: str,
    item: str,
    turn: int,
    last_token_s: float,
    calls: Sequence[CallTiming],
    floors: Mapping[str, RouteFloor],
    seam_floor_s: float = 0.0,
) -> NetTurn:
    """A turn's last-token latency minus the seam's round trip and those of its calls (one per
    overlapping stretch, see the module's doc)."""
    ordered = sorted(calls, key=lambda c: c.start)
    paid, stretch_end, stretch_floor = seam_floor_s, float("-inf"), 0.0
    for call in ordered:
        end = call.end if call.end is not None else call.start
        floor = floors[call.route].floor_s if call.route in floors else 0.0
        if call.start > stretch_end:  # a new stretch: the previous one's floor is paid
            paid += stretch_floor
            stretch_floor = 0.0
        stretch_floor = max(stretch_floor, floor)
        stretch_end = max(stretch_end, end)
    paid += stretch_floor
    return NetTurn(
        arm=arm,
        item=item,
        turn=turn,
        calls=len(ordered),
        response_bytes=sum(c.response_bytes for c in ordered),
        round_trips_s=paid,
        last_token_s=last_token_s,
        net_last_token_s=max(0.0, last_token_s - paid),
        unfloored_calls=sum(1 for c in ordered if c.route not in floors),
    )
