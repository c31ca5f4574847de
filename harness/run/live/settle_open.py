"""Settling a live run a crashed proxy left open (`harness ledger settle RUN`).

With the run's directory, at what its files prove it spent: every logged call at its logged cost
and every call forwarded but never logged at its full reservation (rundir.calls.journal's
`recover_spend`), so a crash never under-counts. Without it, at the run's whole cap. Either way
never below the calls the ledger has already booked for the run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from harness.errors import HarnessError
from ledger.entries import Basis
from ledger.ledger import Ledger
from rundir.calls import recover_spend


@dataclass(frozen=True)
class Settled:
    """What was booked: the total, on which basis, and the note the entry carries."""

    total_usd: Decimal
    basis: Basis
    note: str
    booked_usd: Decimal


def settle_left_open(ledger: Ledger, run_id: str, run_dir: Path | None) -> Settled:
    """Book the settlement of `run_id` (refused in one line if the ledger does not hold it open)."""
    found = ledger.state().runs.get(run_id)
    if found is None:
        raise HarnessError(f"no run {run_id!r} in {ledger.where}", hint="see `harness ledger show`")
    if found.settled:
        raise HarnessError(f"run {run_id!r} is already settled")
    booked = found.calls_usd
    if run_dir is None:
        settled = Settled(
            max(found.cap_usd, booked),
            "full_reservation",
            f"no call log given; booked ${booked}",
            booked,
        )
    else:
        check_call_log(run_dir)
        recovered = recover_spend(run_dir)
        note = (
            f"{recovered.logged_calls} calls logged ${recovered.logged_usd} + "
            f"{recovered.unlogged_calls} reservations never logged "
            f"${recovered.unlogged_usd}; booked ${booked}"
        )
        settled = Settled(max(recovered.total_usd, booked), "call_log", note, booked)
    ledger.settle_run(run_id, basis=settled.basis, total_usd=settled.total_usd, note=settled.note)
    return settled


def check_call_log(run_dir: Path) -> None:
    """Refuse a run directory without a call log, or with a damaged one: a whole line that is not
    JSON. Only a torn last record (no newline: the crash cut it) is expected, and the
    reservation journal covers it."""
    path = run_dir / "calls.jsonl"
    if not path.exists():
        raise HarnessError(f"no call log at {path}", hint="pass the run's directory to --run-dir")
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                json.loads(line)
            except ValueError:
                if line.endswith("\n"):
                    raise HarnessError(f"{path}:{lineno}: not JSON") from None
