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
from ledger.ledger import Ledger, open_store, verify
from ledger.prices import ModelPrice, PriceTable, TokenCounts, cost, load_prices, worst_case
from ledger.settlements import SettlementWriter, SettlementWriterError
from ledger.store import LedgerStore, VerifyReport

__all__ = [
    "Booked",
    "BudgetExceeded",
    "CallSettlement",
    "CapExceeded",
    "Ledger",
    "LedgerCorrupt",
    "LedgerError",
    "LedgerStore",
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
    "open_store",
    "verify",
    "worst_case",
]
