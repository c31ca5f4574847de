"""The reservation journal: `reservations.jsonl` in the run directory, one fsynced line per live
call, written BEFORE the call is forwarded.

If the proxy dies (kill -9) mid-call, the call log has no line for that call, yet the vendor may
have billed it. The journal lets `harness ledger settle RUN --run-dir DIR` charge every call that
was reserved but never logged at its full reservation, so a crash never under-counts.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

JOURNAL_NAME = "reservations.jsonl"


class ReservationJournal:
    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / JOURNAL_NAME
        run_dir.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._lock = threading.Lock()

    def reserve(self, seq: int, amount: Decimal, model: str, route: str) -> None:
        """Durably note a reservation (raises OSError: the call must then not be forwarded)."""
        line = json.dumps(
            {"schema": 1, "seq": seq, "reserved_usd": str(amount), "model": model, "route": route},
            separators=(",", ":"),
        )
        with self._lock:
            os.write(self._fd, line.encode() + b"\n")
            os.fsync(self._fd)

    def close(self) -> None:
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1


@dataclass
class RecoveredSpend:
    logged_usd: Decimal  # sum of the call log's costs
    unlogged_usd: Decimal  # reservations with no call-log line, charged in full
    logged_calls: int
    unlogged_calls: int

    @property
    def total_usd(self) -> Decimal:
        return self.logged_usd + self.unlogged_usd


def recover_spend(run_dir: Path) -> RecoveredSpend:
    """A crashed run's spend from its files: every logged cost, plus every reservation whose call
    never reached the log at its full amount. A torn last line (the crash) is skipped."""
    logged: dict[int, Decimal] = {}
    calls = run_dir / "calls.jsonl"
    if calls.exists():
        for line in calls.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            logged[int(record["seq"])] = Decimal(str(record.get("cost_usd", "0")))
    unlogged = Decimal(0)
    unlogged_calls = 0
    journal = run_dir / JOURNAL_NAME
    if journal.exists():
        for line in journal.read_text(encoding="utf-8").splitlines():
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue
            if int(entry["seq"]) not in logged:
                unlogged += Decimal(entry["reserved_usd"])
                unlogged_calls += 1
    return RecoveredSpend(
        logged_usd=sum(logged.values(), Decimal(0)),
        unlogged_usd=unlogged,
        logged_calls=len(logged),
        unlogged_calls=unlogged_calls,
    )
