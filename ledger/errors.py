"""Errors of the ledger package.

The ledger must not import the orchestrator (DESIGN: data flows one way), so these are plain
exceptions; `harness.cli.ledger` turns them into the CLI's `HarnessError`. Every message says what
to do next, because the people reading them are deciding whether to spend money.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path


class LedgerError(Exception):
    """Base class: a ledger or price-table operation could not be done as asked."""


class PriceTableError(LedgerError, ValueError):
    """A price table file is malformed; names the file and the offending field."""

    def __init__(self, path: Path | str, field: str, problem: str) -> None:
        self.path = str(path)
        self.field = field
        self.problem = problem
        super().__init__(f"{self.path}: {field}: {problem}")


class UnknownModelError(LedgerError, LookupError):
    """A model the price table does not list. Never priced at 0: the call must be refused."""

    def __init__(self, model: str, table: str) -> None:
        self.model = model
        super().__init__(
            f"model {model!r} is not in the price table {table}; add it (or an alias) to a "
            "price table and pass it with --prices: an unpriced call is refused, never free"
        )


class BudgetExceeded(LedgerError):
    """A call's worst case does not fit in what is left of the run's cap."""

    def __init__(
        self, cap: Decimal, spent: Decimal, reserved: Decimal, amount: Decimal, what: str
    ) -> None:
        self.cap, self.spent, self.reserved, self.amount, self.what = (
            cap,
            spent,
            reserved,
            amount,
            what,
        )
        super().__init__(
            f"run budget refused {what}: cap ${cap}, spent ${spent}, reserved by calls in "
            f"flight ${reserved}, this call's worst case ${amount}; raise the run's --cap or "
            "lower the call's max output tokens"
        )


class CapExceeded(LedgerError):
    """A run's cap does not fit in what is left of its stage's cap."""

    def __init__(
        self,
        stage: str,
        cap: Decimal,
        spend: Decimal,
        reservations: Decimal,
        run_id: str,
        run_cap: Decimal,
    ) -> None:
        self.stage, self.cap, self.spend, self.reservations = stage, cap, spend, reservations
        self.run_id, self.run_cap = run_id, run_cap
        super().__init__(
            f"stage {stage!r} cap ${cap} would be passed by run {run_id!r}: settled spend "
            f"${spend} (unreconciled runs counted at 1.5x), open reservations ${reservations}, "
            f"this run's reservation ${run_cap}. To go on: reconcile settled runs with "
            "`harness ledger reconcile`, settle runs a crashed proxy left open with "
            "`harness ledger settle RUN`, lower this run's --cap, or raise the stage cap "
            "with `harness ledger open-stage`"
        )


class LedgerCorrupt(LedgerError):
    """The ledger's hash chain is broken: refuse to append to it or trust its totals."""

    def __init__(self, path: Path | str, line: int, problem: str) -> None:
        self.path, self.line, self.problem = str(path), line, problem
        super().__init__(
            f"{path}:{line}: {problem}; the ledger cannot be trusted: run "
            "`harness ledger verify` and restore the file from a copy"
        )
