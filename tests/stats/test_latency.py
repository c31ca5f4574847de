"""Latency minus the round trip: floors per route, per call, and per turn with overlapping calls."""

from __future__ import annotations

import pytest

from harness.stats.latency import (
    CallTiming,
    floors_from_calls,
    minus_round_trip,
    round_trip_floor,
    turn_minus_round_trip,
)


def _call(route: str, start: float, first: float, end: float, size: int = 100) -> CallTiming:
    return CallTiming(route=route, start=start, first_byte=first, end=end, response_bytes=size)


FLOORS = {
    "openai.chat": round_trip_floor("openai.chat", [0.10, 0.12, 0.50]),  # one slow probe
    "openai.embeddings": round_trip_floor("openai.embeddings", [0.05]),
}


def test_the_floor_is_the_median_warm_round_trip() -> None:
    assert FLOORS["openai.chat"].floor_s == 0.12 and FLOORS["openai.chat"].source == "probe"
    with pytest.raises(ValueError, match="non-negative round trips"):
        round_trip_floor("x", [])


def test_calls_lose_their_route_floor_never_below_zero_and_keep_their_size() -> None:
    calls = [
        _call("openai.chat", 100.0, 100.32, 101.12, size=20_000),
        _call("openai.embeddings", 200.0, 200.01, 200.02),  # faster than its floor
        _call("anthropic.messages", 300.0, 300.4, 301.0),  # no floor for this route
    ]
    chat, embed, unknown = minus_round_trip(calls, FLOORS)
    assert chat.first_byte_s == pytest.approx(0.20) and chat.total_s == pytest.approx(1.0)
    assert chat.response_bytes == 20_000
    assert embed.first_byte_s == 0.0 and embed.total_s == 0.0
    # Fail closed: no floor is no net figure, not a floor of zero.
    assert unknown.floor_s is None and unknown.first_byte_s is None and unknown.total_s is None


def test_run_minimum_floors_are_the_fastest_first_byte_and_say_so() -> None:
    calls = [_call("openai.chat", 0.0, 0.3, 1.0), _call("openai.chat", 5.0, 5.2, 6.0)]
    (floor,) = floors_from_calls(calls).values()
    assert floor.floor_s == pytest.approx(0.2) and floor.source == "run_minimum"
    assert floor.samples == 2


def test_a_turn_pays_one_round_trip_per_stretch_of_overlapping_calls() -> None:
    calls = [
        # Two calls in flight together (an embedding while the chat starts): one round trip,
        # the larger floor.
        _call("openai.embeddings", 10.0, 10.06, 10.1, size=10),
        _call("openai.chat", 10.05, 10.3, 11.0, size=300),
        # Then a second chat call after the first one ended: its own round trip.
        _call("openai.chat", 11.2, 11.4, 12.0, size=200),
        _call("anthropic.messages", 12.1, 12.2, 12.3, size=5),
    ]
    net = turn_minus_round_trip("mem0", "lisbon", 2, 2.5, calls, FLOORS)
    assert net.round_trips_s == pytest.approx(0.12 + 0.12)
    assert net.net_last_token_s == pytest.approx(2.5 - 0.24)
    assert (net.calls, net.response_bytes, net.unfloored_calls) == (4, 515, 1)
    quiet = turn_minus_round_trip("bare", "lisbon", 2, 0.01, [], FLOORS)
    assert quiet.round_trips_s == 0.0 and quiet.net_last_token_s == 0.01
