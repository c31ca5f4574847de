"""Refused connections seen while the run goes on: each one once, named in the log as it is seen,
counted against the turn in flight, and its moment kept in strays_seen.jsonl for the report.

With the study's `on_stray = "halt"` (the default) the first one stops the run: StrayConnection
names the arm and the destination. With `"fail"` they are only counted, and the run fails at its
end (harness/run/watch/strays.py names them then, teardown included).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import structlog

from arms.client import TurnResult
from harness.isolation import IsolationBackend, attempts
from harness.run.watch.strays import Entry, Key, stray_key
from rundir.instances import worker_of
from rundir.network import StraySeen, append_seen

# The orchestrator's logger: a run's log lines keep the one name they had before the split.
log = structlog.get_logger("harness.run.orchestrator")


class StrayConnection(Exception):
    """A refused connection halted the run (`on_stray = "halt"`)."""

    def __init__(self, entry: Entry, result: TurnResult | None = None) -> None:
        self.entry = entry
        self.result = result  # the turn in flight, if it ended within the halt's grace
        self.arm = str(entry.get("arm"))
        self.destination = str(entry.get("destination"))
        source = str(entry.get("source"))
        protocol = entry.get("protocol")
        how = f"{protocol}, {source}" if protocol else source
        flags = entry.get("flags")
        how += f", flagged {'/'.join(map(str, flags))}" if isinstance(flags, list) else ""
        super().__init__(f"arm {self.arm!r} tried to reach {self.destination} ({how})")


def strongest(entries: list[Entry]) -> Entry:
    """The entry a halt names: the harness's own evidence (kernel log, proxy) before a guard
    line, and a guard line the arm could not have forged (no flags) before one it did."""
    return min(entries, key=lambda e: (e.get("source") == "guard", bool(e.get("flags"))))


class StrayWatch:
    def __init__(
        self,
        backend: IsolationBackend,
        run_id: str,
        run_dir: Path,
        seen: set[Key],
        halt: bool,
        worker: int = 0,
    ) -> None:
        self.backend = backend
        # --workers N: the backend is shared, so this watch takes only its own worker's entries
        # (the others' are left for their watches: their turn is the one they are charged to).
        self.worker = worker
        self.run_id = run_id
        self.seen_path = run_dir / "strays_seen.jsonl"
        # Shared with the run's tally: the final egress read names what no look saw (teardown).
        self.seen = seen
        self.halt = halt  # on_stray = "halt"
        self.this_turn: Counter[str] = Counter()  # refused attempts per arm, this turn
        self.running: tuple[str, str, int] | None = None  # the turn in flight: arm, item, turn

    def turn_starts(self, arm: str, item: str, number: int) -> None:
        self.this_turn.clear()
        self.running = (arm, item, number)

    def turn_ended(self) -> None:
        self.running = None

    async def new(self, during: str) -> list[Entry]:
        """Refused connections that appeared since the last look, named in the log as they
        happen (not only at the run's end) and counted per arm in `this_turn`."""
        entries = await asyncio.to_thread(self.backend.egress_attempts)
        new: list[Entry] = []
        for entry in entries:
            key = stray_key(entry)
            if key in self.seen or worker_of(entry) != self.worker:
                continue
            self.seen.add(key)
            new.append(entry)
            self.this_turn[str(entry.get("arm"))] += attempts(entry)
            append_seen(self.seen_path, StraySeen.of(self.run_id, entry, self.running))
            log.warning(
                "stray connection refused",
                stray_arm=entry.get("arm"),
                destination=entry.get("destination"),
                source=entry.get("source"),
                flags=entry.get("flags"),
                during=during,
            )
        return new

    async def halt_if_new(self, during: str) -> None:
        """Between turns (an arm that reached out while starting): halt on a new one."""
        new = await self.new(during)
        if new and self.halt:
            raise StrayConnection(strongest(new))
