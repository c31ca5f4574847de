"""Refused connections by destination, and which of them an arm made at its teardown."""

from __future__ import annotations

from datetime import UTC, datetime

from harness.run.watch.strays import at_teardown, by_destination, stray_key, summary_lines


def _entry(arm: str, destination: str, at: float | str) -> dict[str, object]:
    when = datetime.fromtimestamp(at, UTC).isoformat() if isinstance(at, float) else at
    return {"source": "proxy", "arm": arm, "destination": destination, "time": when}


def test_attempts_after_the_arms_last_turn_are_its_teardown() -> None:
    during = _entry("mem0", "us.i.posthog.com:443", 100.0)
    # Made while another arm ran its turns: still after mem0's own last turn.
    later = _entry("mem0", "us.i.posthog.com:443", 150.0)
    other = _entry("bare", "example.test:80", 150.0)  # bare's turns ran until 200
    entries = [during, later, other]
    late = at_teardown(entries, {stray_key(during)}, {"mem0": 120.0, "bare": 200.0})
    assert late == [later]


def test_an_unseen_attempt_without_a_readable_time_is_teardown_and_a_seen_one_is_not() -> None:
    unseen = _entry("graphiti", "us.i.posthog.com:443", "garbled")
    seen = _entry("graphiti", "github.com:443", "garbled")
    assert at_teardown([unseen, seen], {stray_key(seen)}, {"graphiti": 10.0}) == [unseen]


def test_an_arm_that_never_ran_a_turn_has_no_teardown_of_timed_attempts() -> None:
    start_up = _entry("mem0", "us.i.posthog.com:443", 5.0)
    assert at_teardown([start_up], set(), {}) == []


def test_summary_names_each_destination_with_its_teardown_share() -> None:
    entries = [
        _entry("mem0", "us.i.posthog.com:443", 1.0),
        _entry("mem0", "us.i.posthog.com:443", 2.0),
        _entry("mem0", "raw.githubusercontent.com:443", 3.0),
        _entry("graphiti", "us.i.posthog.com:443", 4.0),
    ]
    refused = by_destination(entries)
    assert refused == {
        "graphiti": {"us.i.posthog.com:443": 1},
        "mem0": {"raw.githubusercontent.com:443": 1, "us.i.posthog.com:443": 2},
    }
    teardown = by_destination(at_teardown(entries, set(), {"mem0": 1.5, "graphiti": 9.0}))
    assert summary_lines(refused, teardown) == [
        "graphiti -> us.i.posthog.com:443: 1",
        "mem0 -> raw.githubusercontent.com:443: 1 (1 at teardown)",
        "mem0 -> us.i.posthog.com:443: 2 (1 at teardown)",
    ]
