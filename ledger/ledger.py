"""The durable spend ledger: an append-only, hash-chained JSONL file shared by every proxy.

Every append reads what other processes appended since, decides against that fresh state (is
there room under the stage cap?), writes one line and fsyncs it, all under one inter-process file
lock (`<ledger>.lock`), so two proxies can never both take the last dollar of a stage.

A writer that dies mid-append leaves a torn last line. It is not silently dropped: the next
process to take the lock moves it to `<ledger>.torn-<n>` and reports it (`Ledger.warnings` and
the log). Anything else wrong with the chain stops the ledger (LedgerCorrupt): totals computed
from a tampered file cannot be trusted with money.
"""

from __future__ import annotations

import copy
import json
import logging
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from ledger.entries import (
    Basis,
    CallSettlement,
    CallsSettled,
    Entry,
    Kind,
    LineProblem,
    Reconciled,
    RunRefused,
    RunReserved,
    RunSettled,
    StageOpened,
    make_entry,
    parse_line,
)
from ledger.errors import CapExceeded, LedgerCorrupt, LedgerError
from ledger.state import LedgerState

log = logging.getLogger(__name__)

# What a transaction decides: the entry to append, and an error to raise once it is durable
# (a refusal is recorded first, then reported).
Decision = tuple[Kind, Any, Exception | None] | None


@dataclass
class Scan:
    """The result of reading ledger bytes against a chain position."""

    good_len: int = 0  # bytes of complete, valid lines
    torn: bytes | None = None  # an unfinished or unparseable last line
    problems: list[tuple[int, str]] = field(default_factory=list)  # (line number, what)


def _scan(data: bytes, state: LedgerState, first_line: int, stop_at_first: bool) -> Scan:
    """Check lines against the chain and fold them into `state` (mutated in place)."""
    scan = Scan()
    lines = data.split(b"\n")
    complete = lines[:-1]  # the piece after the last newline is unfinished (b"" if none)
    tail = lines[-1]
    pos = 0
    for i, raw in enumerate(complete):
        lineno = first_line + i
        is_last = i == len(complete) - 1 and not tail
        try:
            entry = parse_line(raw, state.entries + 1, state.head)
            why = state.check_ref(entry.typed())
            if why:
                raise LineProblem(why)
        except LineProblem as e:
            if is_last and str(e).startswith("not JSON"):
                # An unparseable final line is what a writer killed mid-append leaves.
                scan.torn = raw + b"\n"
                return scan
            scan.problems.append((lineno, str(e)))
            if stop_at_first:
                return scan
            _resync(raw, state)
            pos += len(raw) + 1
            continue
        state.apply(entry)
        pos += len(raw) + 1
        if not scan.problems:
            scan.good_len = pos
    if tail:
        scan.torn = tail
    return scan


def _resync(raw: bytes, state: LedgerState) -> None:
    # verify() goes on after a bad line to report every problem: continue the chain from the
    # bad line's own seq and hash when it has them, so one edit is not reported N times.
    try:
        body = json.loads(raw)
        state.entries, state.head = int(body["seq"]), str(body["hash"])
    except (ValueError, KeyError, TypeError):
        state.entries += 1


@dataclass
class VerifyReport:
    path: Path
    entries: int
    head: str
    problems: list[tuple[int, str]]
    torn_tail: str | None = None  # a torn last line is a crash artifact, reported, not fatal

    @property
    def ok(self) -> bool:
        return not self.problems


def chain_end(path: Path) -> tuple[int, str] | None:
    """The ledger's length and head (what a run's manifest keeps), or None with no ledger yet."""
    if not path.is_file():
        return None
    report = verify(path)
    return report.entries, report.head


def verify(path: Path) -> VerifyReport:
    """Check every line's hash, seq and link to the previous line, without changing the file.

    Detects an edited, removed, inserted or reordered line anywhere but the very end: dropping the
    last lines leaves a shorter chain that is still valid (compare `head` with a saved copy).
    """
    data = path.read_bytes()
    state = LedgerState()
    scan = _scan(data, state, 1, stop_at_first=False)
    torn = None
    if scan.torn is not None:
        lineno = data[: len(data) - len(scan.torn)].count(b"\n") + 1
        torn = f"line {lineno}: torn last line ({len(scan.torn)} bytes), set aside on next open"
    return VerifyReport(path, state.entries, state.head, scan.problems, torn)


class Ledger:
    """One process's handle on a ledger file; thread-safe."""

    def __init__(self, path: Path, *, lock_timeout: float = 60.0) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.warnings: list[str] = []
        self._mutex = threading.Lock()
        # Threads are serialised by _mutex; the file lock is only for other processes. filelock
        # polls a non-blocking flock; its default 50 ms poll would cap contended appends at ~20/s.
        self._flock = FileLock(
            f"{self.path}.lock", timeout=lock_timeout, thread_local=False, poll_interval=0.0005
        )
        self._fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        self._offset = 0
        self._state = LedgerState()
        with self._locked():
            pass  # reads the whole file, sets a torn tail aside, verifies the chain

    # -- reading -------------------------------------------------------------------------

    def _locked(self) -> _Locked:
        return _Locked(self)

    def _refresh(self) -> None:
        """Fold in whatever other processes appended since we last looked (lock held)."""
        size = os.fstat(self._fd).st_size
        if size < self._offset:
            raise LedgerCorrupt(self.path, self._state.entries, "the file shrank under us")
        if size == self._offset:
            return
        data = os.pread(self._fd, size - self._offset, self._offset)
        first_line = self._state.entries + 1
        scan = _scan(data, self._state, first_line, stop_at_first=True)
        self._offset += scan.good_len
        if scan.problems:
            line, problem = scan.problems[0]
            self._fd_close()
            raise LedgerCorrupt(self.path, line, problem)
        if scan.torn is not None:
            self._set_aside(scan.torn, self._state.entries + 1)

    def _set_aside(self, torn: bytes, lineno: int) -> None:
        n = 1
        while Path(f"{self.path}.torn-{n}").exists():
            n += 1
        side = Path(f"{self.path}.torn-{n}")
        with open(side, "xb") as f:
            f.write(torn)
            f.flush()
            os.fsync(f.fileno())
        # Only after the copy is durable may the ledger lose the bytes.
        os.ftruncate(self._fd, self._offset)
        os.fsync(self._fd)
        _fsync_dir(self.path.parent)
        msg = (
            f"{self.path}:{lineno}: torn last line ({len(torn)} bytes; a writer died "
            f"mid-append) moved to {side.name}; its entry did not happen"
        )
        self.warnings.append(msg)
        log.warning(msg)

    def state(self) -> LedgerState:
        """A snapshot of the totals, including other processes' appends."""
        with self._locked():
            return copy.deepcopy(self._state)

    # -- writing -------------------------------------------------------------------------

    def _transact(self, decide: Callable[[LedgerState], Decision]) -> Entry | None:
        with self._locked():
            decision = decide(self._state)
            if decision is None:
                return None
            kind, fields, after = decision
            why = self._state.check_ref(fields)
            if why:
                raise LedgerError(f"{self.path}: cannot record {kind}: {why}")
            entry = make_entry(self._state.entries + 1, self._state.head, kind, fields)
            self._append(entry)
        if after is not None:
            raise after
        return entry

    def _append(self, entry: Entry) -> None:
        line = entry.to_line()
        try:
            view = memoryview(line)
            while view:
                view = view[os.write(self._fd, view) :]
            os.fdatasync(self._fd)
        except OSError as e:
            # Fail closed; whatever reached the file is read back (or set aside) next time.
            raise LedgerError(f"cannot append to ledger {self.path}: {e}") from e
        self._offset += len(line)
        self._state.apply(entry)

    def open_stage(self, stage: str, cap_usd: Decimal, *, replace: bool = False) -> Entry | None:
        """Open a stage with its cap. Re-opening with the same cap is a no-op; another cap
        needs `replace=True` so a proxy started with a stale cap cannot change it silently."""

        def decide(state: LedgerState) -> Decision:
            old = state.stages.get(stage)
            if old is not None and old.cap_usd == cap_usd:
                return None
            if old is not None and not replace:
                raise LedgerError(
                    f"stage {stage!r} is open with cap ${old.cap_usd}, not ${cap_usd}; "
                    "pass replace=True (`--replace`) to change its cap"
                )
            return "stage_opened", StageOpened(stage=stage, cap_usd=cap_usd), None

        return self._transact(decide)

    def reserve_run(self, run_id: str, cap_usd: Decimal, stage: str = "default") -> Entry:
        """Reserve a run's whole cap in its stage, or record a refusal and raise CapExceeded."""

        def decide(state: LedgerState) -> Decision:
            if stage not in state.stages:
                raise LedgerError(
                    f"stage {stage!r} was never opened in {self.path}; open it with "
                    f"`harness ledger open-stage {stage} --cap USD`"
                )
            cap = state.stages[stage].cap_usd
            spend, reserved = state.stage_spend(stage), state.stage_reserved(stage)
            if spend + reserved + cap_usd > cap:
                err = CapExceeded(stage, cap, spend, reserved, run_id, cap_usd)
                refusal = RunRefused(stage=stage, run_id=run_id, cap_usd=cap_usd, why=str(err))
                return "run_refused", refusal, err
            return "run_reserved", RunReserved(stage=stage, run_id=run_id, cap_usd=cap_usd), None

        entry = self._transact(decide)
        assert entry is not None  # decide never returns None here
        return entry

    def settle_calls(self, calls: Sequence[CallSettlement]) -> Entry | None:
        """Book many calls' costs in one fsynced entry (None if there is nothing to book)."""
        if not calls:
            return None
        batch = CallsSettled(calls=tuple(calls))
        return self._transact(lambda state: ("calls_settled", batch, None))

    def settle_run(
        self,
        run_id: str,
        *,
        in_flight: int = 0,
        basis: Basis = "settlements",
        total_usd: Decimal | None = None,
        note: str = "",
    ) -> Entry:
        """Close a run. Only with no call in flight: one still running has unbooked spend.

        `total_usd` defaults to the sum of the run's settlements; a larger figure (a call log's,
        the full reservation) may be given, a smaller one may not: booked spend is never undone.
        """
        if in_flight != 0:
            raise LedgerError(
                f"run {run_id!r} still has {in_flight} calls in flight; settle them first"
            )

        def decide(state: LedgerState) -> Decision:
            run = state.runs.get(run_id)
            booked = run.calls_usd if run else Decimal(0)
            total = booked if total_usd is None else total_usd
            if total < booked:
                raise LedgerError(
                    f"run {run_id!r} has ${booked} of settled calls; a total of ${total} "
                    "would undo booked spend"
                )
            fields = RunSettled(run_id=run_id, in_flight=0, total_usd=total, basis=basis, note=note)
            return "run_settled", fields, None

        entry = self._transact(decide)
        assert entry is not None
        return entry

    def reconcile(
        self, run_ids: Sequence[str], vendor_usd: Decimal, source: str, source_sha256: str
    ) -> Entry:
        """Record the vendor's figure for settled runs (it then replaces the 1.5x factor)."""

        def decide(state: LedgerState) -> Decision:
            missing = [r for r in run_ids if r not in state.runs]
            if missing:
                raise LedgerError(f"{self.path}: no run {missing[0]!r} in the ledger")
            computed = sum((state.runs[r].computed_usd for r in run_ids), Decimal(0))
            fields = Reconciled(
                run_ids=tuple(run_ids),
                vendor_usd=vendor_usd,
                computed_usd=computed,
                source=source,
                source_sha256=source_sha256,
            )
            return "reconciled", fields, None

        entry = self._transact(decide)
        assert entry is not None
        return entry

    def _fd_close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def close(self) -> None:
        with self._mutex:
            self._fd_close()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Locked:
    """Thread mutex, then the inter-process lock, then a refresh from the file."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    def __enter__(self) -> None:
        led = self.ledger
        led._mutex.acquire()
        try:
            if led._fd < 0:
                raise LedgerError(f"ledger {led.path} is closed")
            try:
                led._flock.acquire()
            except Timeout as e:
                raise LedgerError(
                    f"could not lock {led.path} within {led._flock.timeout}s; another process "
                    "holds it: is a proxy stuck?"
                ) from e
            try:
                led._refresh()
            except BaseException:
                led._flock.release()
                raise
        except BaseException:
            led._mutex.release()
            raise

    def __exit__(self, *exc: object) -> None:
        self.ledger._flock.release()
        self.ledger._mutex.release()


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
