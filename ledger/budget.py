"""The in-process budget of one run: reserve a call's worst case before it goes out, settle after.

The proxy calls `reserve` before forwarding a call and `settle` (or `release`, for a call that
never reached the vendor) on every path afterwards. The check and the booking happen under one
`threading.Lock`, so 200 calls racing for the last dollar cannot all pass; asyncio callers call
`reserve` without an await between the check and the forward, which keeps it atomic for them too.

Two rules that gateways get wrong (see the wire-format notes, "Traps"):
- a reservation is never shrunk to fit what is left: a call whose worst case does not fit is
  refused, because "what is left" is not what the call might cost;
- an actual cost above the reservation is booked in full (and flagged), never capped at the
  reservation: the vendor bills what it bills.
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass
from decimal import Decimal

from ledger.errors import BudgetExceeded

ZERO = Decimal(0)


@dataclass(frozen=True)
class Reservation:
    id: int
    amount: Decimal
    what: str


@dataclass(frozen=True)
class Booked:
    """What `settle` booked; `flags` goes into the call log and the ledger's settlement."""

    reservation: Reservation
    actual: Decimal
    flags: tuple[str, ...]


class RunBudget:
    def __init__(self, cap_usd: Decimal) -> None:
        if cap_usd < 0:
            raise ValueError(f"a run's cap must be >= 0, got {cap_usd}")
        self.cap = cap_usd
        self._lock = threading.Lock()
        self._spent = ZERO
        self._reserved = ZERO
        self._open: dict[int, Reservation] = {}
        self._ids = itertools.count(1)
        self.over_reservation = 0  # calls whose actual cost passed their reservation

    def reserve(self, amount: Decimal, what: str) -> Reservation:
        """Hold `amount` for a call, or raise BudgetExceeded (nothing is held then)."""
        if amount < 0:
            raise ValueError(f"a reservation must be >= 0, got {amount} for {what}")
        with self._lock:
            if self._spent + self._reserved + amount > self.cap:
                raise BudgetExceeded(self.cap, self._spent, self._reserved, amount, what)
            reservation = Reservation(next(self._ids), amount, what)
            self._open[reservation.id] = reservation
            self._reserved += amount
            return reservation

    def _take(self, reservation: Reservation) -> None:
        if self._open.pop(reservation.id, None) is None:
            # Settling twice would book a call twice or release someone else's money.
            raise ValueError(f"reservation {reservation.id} ({reservation.what}) is not open")
        self._reserved -= reservation.amount

    def settle(self, reservation: Reservation, actual: Decimal) -> Booked:
        """Release the reservation and book the call's actual cost, whatever it is."""
        if actual < 0:
            raise ValueError(f"an actual cost must be >= 0, got {actual}")
        with self._lock:
            self._take(reservation)
            self._spent += actual
            flags: tuple[str, ...] = ()
            if actual > reservation.amount:
                self.over_reservation += 1
                flags += ("over_reservation",)
            if self._spent > self.cap:
                flags += ("over_cap",)
            return Booked(reservation, actual, flags)

    def release(self, reservation: Reservation) -> None:
        """Give back a reservation whose call never reached the vendor (nothing is booked)."""
        with self._lock:
            self._take(reservation)

    def snapshot(self) -> tuple[Decimal, Decimal, int]:
        """(spent, reserved, in_flight) read together, consistent with each other."""
        with self._lock:
            return self._spent, self._reserved, len(self._open)

    @property
    def spent(self) -> Decimal:
        with self._lock:
            return self._spent

    @property
    def reserved(self) -> Decimal:
        with self._lock:
            return self._reserved

    @property
    def remaining(self) -> Decimal:
        """Cap minus spent minus reserved; negative once an over-reservation passed the cap."""
        with self._lock:
            return self.cap - self._spent - self._reserved

    @property
    def in_flight(self) -> int:
        with self._lock:
            return len(self._open)
