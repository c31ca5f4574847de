"""Refused connections by arm and destination, and the ones an arm made at its teardown.

An entry of egress.jsonl may stand for several attempts (`count`: a burst folded into one line,
harness/isolation/egress_book.py); every count here is of attempts, not lines.

The orchestrator charges every refused connection it sees while a turn runs (or while arms
start) to that moment. An engine keeps trying after its last turn: a background telemetry
sender retries while the other arms run, an atexit hook flushes when the process stops, and no
turn of that arm is running. The final read of the egress sources, after every arm has
stopped, names each attempt made after its arm's last turn ended as that arm's teardown, by
destination, so a run that fails for them says what the engine tried to reach and when,
instead of a bare count.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from datetime import datetime

from harness.isolation import attempts
from rundir.instances import instance_of

# What makes one egress entry itself (each is appended once; the orchestrator's looks see it again).
KEY_FIELDS = ("arm", "worker", "destination", "time", "source", "line", "pid")

Entry = dict[str, object]
Key = tuple[str, ...]


def stray_key(entry: Entry) -> Key:
    return tuple(str(entry.get(field)) for field in KEY_FIELDS)


def by_destination(entries: Iterable[Entry]) -> dict[str, dict[str, int]]:
    """arm -> destination -> how many refused attempts, in a stable order."""
    counts: dict[str, Counter[str]] = {}
    for entry in entries:
        where = counts.setdefault(str(entry.get("arm")), Counter())
        where[str(entry.get("destination"))] += attempts(entry)  # a folded line counts them all
    return {arm: dict(sorted(counts[arm].items())) for arm in sorted(counts)}


def at_teardown(
    entries: Iterable[Entry], seen: set[Key], last_turn_end: dict[str, float]
) -> list[Entry]:
    """The entries made after their arm's last turn ended (its later work, its exit), and
    those no turn saw and whose time cannot be read. With --workers, each copy of an arm by
    its own last turn (`last_turn_end` is keyed by instance: `A`, `A@1`, ...)."""
    late = []
    for entry in entries:
        ended = last_turn_end.get(instance_of(entry))  # keyed by the worker's copy (`A@k`)
        when = _epoch(entry.get("time"))
        if when is None:
            if stray_key(entry) not in seen:
                late.append(entry)
        elif ended is not None and when > ended:
            late.append(entry)
    return late


def _epoch(value: object) -> float | None:
    try:
        return datetime.fromisoformat(str(value)).timestamp()
    except ValueError:
        return None


def summary_lines(
    refused: dict[str, dict[str, int]], teardown: dict[str, dict[str, int]]
) -> list[str]:
    """One line per arm and destination: `mem0 -> us.i.posthog.com:443: 13 (12 at teardown)`."""
    lines = []
    for arm, destinations in refused.items():
        for destination, count in destinations.items():
            late = teardown.get(arm, {}).get(destination, 0)
            when = f" ({late} at teardown)" if late else ""
            lines.append(f"{arm} -> {destination}: {count}{when}")
    return lines
