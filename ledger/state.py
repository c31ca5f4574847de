"""What a ledger's entries add up to: stages, their caps, runs and how much each counts.

How a run counts against its stage's cap:
- reserved, not settled: its full reservation (or its settled calls at 1.5x if more), because a
  crashed proxy may have spent all of it and the ledger cannot know how much yet;
- settled, not reconciled: its computed spend x 1.5 (UNRECONCILED_FACTOR), because the proxy's
  computed spend can undercount the vendor's bill (calls cut mid-stream and counted by the proxy,
  vendor-side retries, price-table drift) and the cap must hold against the bill, not the estimate;
- reconciled: the larger of the vendor's figure and the computed spend: the bill is the truth, but
  an export that lags or misses calls must not lower the spend below what was computed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from ledger.entries import (
    GENESIS,
    Basis,
    CallsSettled,
    Entry,
    Reconciled,
    RunRefused,
    RunReserved,
    RunSettled,
    StageOpened,
)

UNRECONCILED_FACTOR = Decimal("1.5")
ZERO = Decimal(0)


@dataclass
class RunState:
    run_id: str
    stage: str
    cap_usd: Decimal
    calls_usd: Decimal = ZERO  # sum of the run's call settlements
    calls: int = 0
    flagged_calls: int = 0
    late_calls: int = 0  # settlements that arrived after the run was settled
    settled: bool = False
    total_usd: Decimal | None = None  # from run_settled
    basis: Basis | None = None
    vendor_usd: Decimal | None = None  # this run's share of reconciled vendor figures

    @property
    def state(self) -> str:
        if not self.settled:
            return "open"
        return "reconciled" if self.vendor_usd is not None else "settled"

    @property
    def computed_usd(self) -> Decimal:
        """The run's own figure: its settled total, plus any settlement that came after it."""
        if self.total_usd is None:
            return self.calls_usd
        return max(self.total_usd, self.calls_usd)

    @property
    def charge_usd(self) -> Decimal:
        """What the run counts against its stage's cap (see the module docstring)."""
        if not self.settled:
            return max(self.cap_usd, self.calls_usd * UNRECONCILED_FACTOR)
        if self.vendor_usd is None:
            return self.computed_usd * UNRECONCILED_FACTOR
        return max(self.vendor_usd, self.computed_usd)


@dataclass
class StageState:
    stage: str
    cap_usd: Decimal
    runs: list[str] = field(default_factory=list)
    refused: int = 0


@dataclass
class LedgerState:
    stages: dict[str, StageState] = field(default_factory=dict)
    runs: dict[str, RunState] = field(default_factory=dict)
    entries: int = 0
    head: str = GENESIS  # the `prev` of the first entry

    def apply(self, entry: Entry) -> None:
        """Fold one already-verified entry into the totals."""
        fields = entry.typed()
        self.entries = entry.seq
        self.head = entry.hash
        if isinstance(fields, StageOpened):
            # Re-opening a stage records a new cap; the latest one holds.
            stage = self.stages.get(fields.stage)
            if stage is None:
                self.stages[fields.stage] = StageState(fields.stage, fields.cap_usd)
            else:
                stage.cap_usd = fields.cap_usd
        elif isinstance(fields, RunReserved):
            self.runs[fields.run_id] = RunState(fields.run_id, fields.stage, fields.cap_usd)
            self.stages[fields.stage].runs.append(fields.run_id)
        elif isinstance(fields, RunRefused):
            if fields.stage in self.stages:
                self.stages[fields.stage].refused += 1
        elif isinstance(fields, CallsSettled):
            for call in fields.calls:
                run = self.runs[call.run_id]
                run.calls_usd += call.cost_usd
                run.calls += 1
                run.flagged_calls += bool(call.flags)
                run.late_calls += run.settled
        elif isinstance(fields, RunSettled):
            run = self.runs[fields.run_id]
            run.settled, run.total_usd, run.basis = True, fields.total_usd, fields.basis
        elif isinstance(fields, Reconciled):
            self._apportion(fields)

    def _apportion(self, rec: Reconciled) -> None:
        # One vendor figure may cover several runs; share it by computed spend (equally if none
        # spent anything) so each run's charge, and so each stage's, stays well defined.
        runs = [self.runs[r] for r in rec.run_ids]
        total = sum((r.computed_usd for r in runs), ZERO)
        for run in runs:
            share = (
                rec.vendor_usd * run.computed_usd / total
                if total > 0
                else rec.vendor_usd / len(runs)
            )
            run.vendor_usd = share

    def stage_spend(self, stage: str) -> Decimal:
        """Settled runs' charges (with the factors), not counting open reservations."""
        return sum(
            (self.runs[r].charge_usd for r in self.stages[stage].runs if self.runs[r].settled),
            ZERO,
        )

    def stage_reserved(self, stage: str) -> Decimal:
        """Open runs' charges: their full reservations."""
        return sum(
            (self.runs[r].charge_usd for r in self.stages[stage].runs if not self.runs[r].settled),
            ZERO,
        )

    def check_ref(self, fields: object) -> str | None:
        """Why an entry would not fit this state (unknown stage or run...), or None if it fits."""
        if isinstance(fields, RunReserved):
            if fields.stage not in self.stages:
                return f"stage {fields.stage!r} was never opened"
            if fields.run_id in self.runs:
                return f"run {fields.run_id!r} is already reserved"
        elif isinstance(fields, CallsSettled):
            for call in fields.calls:
                if call.run_id not in self.runs:
                    return f"call settlement for run {call.run_id!r}, which was never reserved"
        elif isinstance(fields, RunSettled):
            run = self.runs.get(fields.run_id)
            if run is None:
                return f"run {fields.run_id!r} was never reserved"
            if run.settled:
                return f"run {fields.run_id!r} is already settled"
        elif isinstance(fields, Reconciled):
            for run_id in fields.run_ids:
                found = self.runs.get(run_id)
                if found is None:
                    return f"run {run_id!r} was never reserved"
                if not found.settled:
                    return f"run {run_id!r} is still open: settle it before reconciling it"
        return None
