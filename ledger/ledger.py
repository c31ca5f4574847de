"""The durable spend ledger's rules, written once above its stores (`ledger.store`).

Reserve a run's cap in its stage before it starts and refuse it past the stage's cap; book
calls; settle a run only with no call in flight; count unreconciled spend at 1.5x
(`ledger.state`); chain every entry to the one before by its hash (`ledger.entries`). Each
operation is one store transaction: the decision and the entry that records it happen under the
store's lock, against the state every writer has left, so two proxies (on one machine with the
file store, on many with the PostgreSQL one) can never both take the last dollar of a stage.

Where the ledger lives is a location: a file path (`ledger.jsonl`, the embedded default) or a
`postgresql://` URL (`open_store`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

from ledger.entries import (
    Basis,
    CallSettlement,
    CallsSettled,
    Entry,
    Kind,
    LiveJobTakenOver,
    Reconciled,
    RunRefused,
    RunReserved,
    RunSettled,
    StageOpened,
    make_entry,
)
from ledger.errors import CapExceeded, LedgerError
from ledger.file_store import FileStore, file_lines
from ledger.pg_store import PostgresStore, has_password, is_postgres_url, printable, read_lines
from ledger.state import LedgerState
from ledger.store import LedgerStore, VerifyReport, scan_lines

# What a transaction decides: the entry to append, and an error to raise once it is durable
# (a refusal is recorded first, then reported).
Decision = tuple[Kind, Any, Exception | None] | None

Location = Path | str


def is_url(location: Location) -> bool:
    """A location with a scheme (`postgresql://`), not a file path."""
    return isinstance(location, str) and "://" in location


def where(location: Location) -> str:
    """The location fit to print: a URL without its password."""
    return printable(location) if isinstance(location, str) else str(location)


def open_store(location: Location, *, lock_timeout: float = 60.0) -> LedgerStore:
    """The store at `location`: a PostgreSQL URL, else a file path."""
    if is_url(location):
        assert isinstance(location, str)
        if not is_postgres_url(location):
            raise LedgerError(
                f"ledger {where(location)}: only postgresql:// URLs (or a file path) are ledgers"
            )
        return PostgresStore(location, lock_timeout=lock_timeout)
    return FileStore(Path(location), lock_timeout=lock_timeout)


def exists(location: Location) -> bool:
    """Whether there is a ledger to read: a file that exists; a database is asked when opened."""
    return is_url(location) or Path(location).exists()


def refuse_password(location: Location) -> None:
    """A location that will be written to a run directory must not carry a password."""
    if isinstance(location, str) and has_password(location):
        raise LedgerError(
            f"the ledger URL {where(location)} carries a password, which would be written to "
            "the run directory: put it in PGPASSWORD or ~/.pgpass and leave it out of the URL"
        )


def display_name(location: Location) -> str:
    """A short name for messages: a file's base name, a URL without its password."""
    return where(location) if is_url(location) else Path(location).name


def as_location(text: str) -> Location:
    """A location as written (a flag, a study field, run.json): a URL stays a string."""
    return text if is_url(text) else Path(text)


def entry_lines(location: Location) -> list[bytes]:
    """Every stored entry's bytes in order, unchecked (an unfinished file tail included)."""
    return read_lines(str(location)) if is_url(location) else file_lines(Path(location))


def chain_end(location: Location) -> tuple[int, str] | None:
    """The ledger's length and head (what a run's manifest keeps), or None with no ledger yet."""
    if not is_url(location) and not Path(location).is_file():
        return None
    report = verify(location)
    return report.entries, report.head


def verify(location: Location) -> VerifyReport:
    """Check every entry's hash, seq and link to the previous one, without changing anything.

    Detects an edited, removed, inserted or reordered entry anywhere but the very end: dropping
    the last entries leaves a shorter chain that is still valid (compare `head` with a saved
    copy, as `harness audit` does with the head a run's manifest kept).
    """
    lines = entry_lines(location)
    state = LedgerState()
    scan = scan_lines(lines, state, 1, stop_at_first=False, may_tear=not is_url(location))
    torn = None
    if scan.torn is not None:
        data = b"\n".join(lines)  # the file's bytes again
        lineno = data[: len(data) - len(scan.torn)].count(b"\n") + 1
        torn = f"line {lineno}: torn last line ({len(scan.torn)} bytes), set aside on next open"
    return VerifyReport(where(location), state.entries, state.head, scan.problems, torn)


class Ledger:
    """One process's handle on a ledger; thread-safe."""

    def __init__(self, location: Location | LedgerStore, *, lock_timeout: float = 60.0) -> None:
        self.store = (
            location
            if isinstance(location, LedgerStore)
            else open_store(location, lock_timeout=lock_timeout)
        )
        self.where = self.store.where
        self.warnings = self.store.warnings

    @property
    def path(self) -> Path:
        """The ledger file (the file store's only)."""
        if not isinstance(self.store, FileStore):
            raise LedgerError(f"ledger {self.where} is not a file")
        return self.store.path

    def state(self) -> LedgerState:
        """A snapshot of the totals, including other processes' appends."""
        with self.store.transaction() as state:
            return copy.deepcopy(state)

    def _transact(self, decide: Callable[[LedgerState], Decision]) -> Entry | None:
        with self.store.transaction() as state:
            decision = decide(state)
            if decision is None:
                return None
            kind, fields, after = decision
            why = state.check_ref(fields)
            if why:
                raise LedgerError(f"{self.where}: cannot record {kind}: {why}")
            entry = make_entry(state.entries + 1, state.head, kind, fields)
            self.store.append(entry)
        if after is not None:
            raise after
        return entry

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

    def reserve_run(
        self, run_id: str, cap_usd: Decimal, stage: str = "default", *, adopt: bool = False
    ) -> Entry | None:
        """Reserve a run's whole cap in its stage, or record a refusal and raise CapExceeded.

        `adopt`: a proxy started again for the same run (its first failed to bind, or died)
        takes over the run's open reservation, same stage and cap, and writes nothing (None):
        counting it twice would refuse the run against its own reservation."""

        def decide(state: LedgerState) -> Decision:
            held = state.runs.get(run_id)
            if adopt and held is not None:
                if held.settled:
                    raise LedgerError(
                        f"run {run_id!r} is already settled in {self.where}: a settled run "
                        "cannot spend again; start a new run"
                    )
                if held.stage != stage or held.cap_usd != cap_usd:
                    raise LedgerError(
                        f"run {run_id!r} is reserved with ${held.cap_usd} in stage "
                        f"{held.stage!r}, not ${cap_usd} in {stage!r}: a restarted proxy "
                        "adopts its run's reservation only as it was made"
                    )
                return None
            if stage not in state.stages:
                raise LedgerError(
                    f"stage {stage!r} was never opened in {self.where}; open it with "
                    f"`harness ledger open-stage {stage} --cap USD`"
                )
            cap = state.stages[stage].cap_usd
            spend, reserved = state.stage_spend(stage), state.stage_reserved(stage)
            if spend + reserved + cap_usd > cap:
                err = CapExceeded(stage, cap, spend, reserved, run_id, cap_usd)
                refusal = RunRefused(stage=stage, run_id=run_id, cap_usd=cap_usd, why=str(err))
                return "run_refused", refusal, err
            return "run_reserved", RunReserved(stage=stage, run_id=run_id, cap_usd=cap_usd), None

        return self._transact(decide)

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
                raise LedgerError(f"{self.where}: no run {missing[0]!r} in the ledger")
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

    def record_takeover(
        self, run_id: str, stale_run_id: str, stale_pid: int, stale_host: str, stale_since: str
    ) -> Entry:
        """Record that `run_id` took the live-job slot of a job that died holding it."""
        fields = LiveJobTakenOver(
            run_id=run_id,
            stale_run_id=stale_run_id,
            stale_pid=stale_pid,
            stale_host=stale_host,
            stale_since=stale_since,
        )
        entry = self._transact(lambda state: ("live_job_taken_over", fields, None))
        assert entry is not None
        return entry

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
