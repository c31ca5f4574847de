"""Refused connections from every source, attributed from the harness's own evidence.

Sources: each arm's socket guard log (`egress/<arm>/egress.jsonl`, in a folder only that arm can
write: docker mounts it into that arm's container alone), the proxy's refusals
(`egress/proxy/egress.jsonl`, written by the proxy, attributed by the listener a call came in on),
and the kernel log (docker_rules, attributed by the bridge a packet arrived on).

A guard log is written by the arm itself, so nothing in its lines is believed but the fact that
the arm wrote them: every line read from arm A's folder is A's, whatever arm it names (a line
naming another arm is flagged `forged` and kept as A's, with the name it claimed), and a line that
is not a JSON object is A's too (flagged `unreadable`), never a reason to stop reading.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError

from rundir.egress import EgressEntry, write_egress

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


def _lines(path: Path) -> list[str]:
    """The lines of a log an arm can write: never through a symlink it planted (to /dev/zero,
    to another arm's log), only a regular file, and at most READ_MAX bytes of it."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return []
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return ["(not a regular file)"]
        data = f.read(READ_MAX)
    return data.decode("utf-8", errors="replace").splitlines()


def guard_entries(run_dir: Path, arms: Iterable[str]) -> list[dict[str, object]]:
    """Every line of each arm's guard log, attributed to the arm whose folder it is in."""
    entries: list[dict[str, object]] = []
    for arm in arms:
        for number, line in enumerate(_lines(guard_log(run_dir, arm)), 1):
            if line.strip():
                entries.append(attribute(arm, line, number))
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


def proxy_entries(run_dir: Path) -> list[dict[str, object]]:
    """The proxy's refusals (it names the arm by the listener the call arrived on) and the DNS
    refuser's (by the network the query arrived on: dns_refuser)."""
    entries: list[dict[str, object]] = []
    log = proxy_log(run_dir)
    for line in _lines(log) + _lines(log.with_name("dns.jsonl")):
        with contextlib.suppress(ValueError):
            entry = json.loads(line)
            if isinstance(entry, dict):
                entries.append(_entry({"source": "proxy", **entry}).as_dict())
    return entries


def _entry(entry: dict[str, object]) -> EgressEntry:
    """An entry as egress.jsonl's model has it; one that does not fit is kept, flagged
    `unreadable`: a refusal is evidence against the run, never dropped for its form."""
    try:
        return EgressEntry.model_validate(entry)
    except ValidationError:
        arm, source = entry.get("arm"), entry.get("source")
        return EgressEntry(
            arm=arm if isinstance(arm, str) else "?",
            destination="?",
            time="?",
            source=source if source in ("guard", "proxy", "dns", "kernel") else "proxy",
            flags=["unreadable"],
            raw=json.dumps(entry, default=str)[:_FIELD_MAX],
        )


def merge(entries: list[dict[str, object]], path: Path) -> list[dict[str, object]]:
    """Deduplicated (a guard line read twice is one attempt), in time order, written to `path`
    (egress.jsonl) atomically."""
    unique: dict[tuple[object, ...], dict[str, object]] = {}
    for entry in entries:
        key = tuple(
            str(entry.get(k)) for k in ("arm", "destination", "time", "source", "line", "pid")
        )
        unique.setdefault(key, entry)
    merged = sorted(unique.values(), key=lambda e: str(e.get("time")))
    checked = [_entry(e) for e in merged]
    write_egress(path, checked)
    return [e.as_dict() for e in checked]
