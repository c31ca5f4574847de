"""The durable spend ledger, the per-run budget and the price tables (imports neither the
orchestrator nor the proxy)."""

from ledger.budget import Booked, Reservation, RunBudget
from ledger.entries import CallSettlement
from ledger.errors import (
    BudgetExceeded,
    CapExceeded,
    LedgerCorrupt,
    LedgerError,
    PriceTableError,
    UnknownModelError,
)
from ledger.ledger import Ledger, VerifyReport, verify
from ledger.prices import ModelPrice, PriceTable, TokenCounts, cost, load_prices, worst_case
from ledger.settlements import SettlementWriter, SettlementWriterError

__all__ = [
    "Booked",
    "BudgetExceeded",
    "CallSettlement",
    "CapExceeded",
    "Ledger",
    "LedgerCorrupt",
    "LedgerError",
    "ModelPrice",
    "PriceTable",
    "PriceTableError",
    "Reservation",
    "RunBudget",
    "SettlementWriter",
    "SettlementWriterError",
    "TokenCounts",
    "UnknownModelError",
    "VerifyReport",
    "cost",
    "load_prices",
    "verify",
    "worst_case",
]
