"""Refused connections from every source, attributed from the harness's own evidence.

Sources: each arm's socket guard log (`egress/<arm>/egress.jsonl`, in a folder only that arm can
write: docker mounts it into that arm's container alone), the proxy's refusals
(`egress/proxy/egress.jsonl`, written by the proxy, attributed by the listener a call came in on),
and the kernel log (firewall.py, attributed by the bridge a packet arrived on).

A guard log is written by the arm itself, so nothing in its lines is believed but the fact that
the arm wrote them: every line read from arm A's folder is A's, whatever arm it names (a line
naming another arm is flagged `forged` and kept as A's, with the name it claimed), and a line that
is not a JSON object is A's too (flagged `unreadable`), never a reason to stop reading.

Every source is read through the run's EgressBook (egress_book.py) when one is given: only the
lines written since the last look, each once, appended to egress.jsonl with repeats counted.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

from harness.isolation.egress_book import EgressBook, Tail, as_entry

PROXY_DIR = "proxy"  # egress/proxy/: the proxy's own refusals (an arm may not be named so)
_FIELD_MAX = 300  # an arm's text kept in a field: enough to read, not enough to flood a report
READ_MAX = 16 * 1024 * 1024  # of one log per look: an arm flooding its log cannot stall the run


def guard_log(run_dir: Path, arm: str) -> Path:
    """Where arm `arm`'s guard writes (its own folder), made if missing."""
    if not arm or arm.startswith(".") or "/" in arm or "\\" in arm:
        raise ValueError(f"arm name {arm!r} cannot name a folder of the run")
    folder = run_dir / "egress" / arm
    folder.mkdir(parents=True, exist_ok=True)
    return folder / "egress.jsonl"


def proxy_log(run_dir: Path) -> Path:
    return guard_log(run_dir, PROXY_DIR)


def _tail(path: Path, book: EgressBook | None) -> Tail:
    """The run's reader of `path` (new lines only), or a one-off one reading it whole."""
    return book.tail(path) if book is not None else Tail(path)


def guard_entries(
    run_dir: Path, arms: Iterable[str], book: EgressBook | None = None
) -> list[dict[str, object]]:
    """Each arm's guard log lines (new since the book's last look), attributed to the arm whose
    folder it is in; a log its arm rewrote is read again, its lines flagged `rewritten`."""
    entries: list[dict[str, object]] = []
    for arm in arms:
        tail = _tail(guard_log(run_dir, arm), book)
        first = tail.lines_read
        for number, line in enumerate(tail.lines(), 1):
            if line.strip():
                entry = attribute(arm, line, first + number if not tail.rewritten else number)
                if tail.rewritten:
                    flags = {*entry.get("flags", []), "rewritten"}  # type: ignore[misc]
                    entry["flags"] = sorted(flags)
                entries.append(entry)
    return entries


def attribute(arm: str, line: str, number: int = 0) -> dict[str, object]:
    """One guard line as an entry of `arm`, the arm that wrote it."""
    try:
        claimed = json.loads(line)
    except ValueError:
        claimed = None
    if not isinstance(claimed, dict):
        return {
            "schema": 1,
            "arm": arm,
            "destination": "?",
            "time": "?",
            "source": "guard",
            "line": number,
            "flags": ["unreadable"],
            "raw": line[:_FIELD_MAX],
        }
    entry: dict[str, object] = {"schema": 1, "source": "guard", "line": number}
    for key in ("destination", "time", "pid", "kind"):
        if key in claimed:
            value = claimed[key]
            keep_int = isinstance(value, int) and key in ("pid", "kind")
            entry[key] = value if keep_int else str(value)[:_FIELD_MAX]
    entry.setdefault("destination", "?")
    entry.setdefault("time", "?")
    entry["arm"] = arm
    flags = []
    if claimed.get("arm") != arm:
        flags.append("forged")
        entry["claimed_arm"] = str(claimed.get("arm"))[:_FIELD_MAX]
    if claimed.get("source", "guard") != "guard":
        flags.append("forged")
        entry["claimed_source"] = str(claimed.get("source"))[:_FIELD_MAX]
    if flags:
        entry["flags"] = sorted(set(flags))
    return entry


def real_time(
    entry: dict[str, object], history: dict[str, list[tuple[float, int]]]
) -> dict[str, object]:
    """A guard entry stamped with its arm's pinned clock, in real time (kept as `arm_time`):
    the offset in force is the latest one written (history: arm -> [(real time written,
    offset)]) before the real time it implies. A time the arm made up that is no time at all
    stays as it was."""
    try:
        arm_time = datetime.fromisoformat(str(entry["time"])).timestamp()
        offset = 0
        for written, candidate in reversed(history.get(str(entry["arm"]), [])):
            if arm_time - candidate >= written - 1:  # the offset is rounded up: 1 s of slack
                offset = candidate
                break
        real = datetime.fromtimestamp(arm_time - offset, UTC).isoformat(timespec="milliseconds")
    except (ValueError, OverflowError, OSError):
        return entry
    return {**entry, "time": real, "arm_time": entry["time"]}


def proxy_entries(run_dir: Path, book: EgressBook | None = None) -> list[dict[str, object]]:
    """The proxy's refusals (it names the arm by the listener the call arrived on) and the DNS
    refuser's (by the network the query arrived on: dns_refuser), new since the last look:
    each line once, so lookups of one name in one millisecond are each counted."""
    entries: list[dict[str, object]] = []
    log = proxy_log(run_dir)
    lines = _tail(log, book).lines() + _tail(log.with_name("dns.jsonl"), book).lines()
    for line in lines:
        with contextlib.suppress(ValueError):
            entry = json.loads(line)
            if isinstance(entry, dict):
                entries.append(as_entry({"source": "proxy", **entry}).as_dict())
    return entries
