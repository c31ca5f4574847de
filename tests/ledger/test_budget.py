"""The per-run budget: atomic under 200 racing threads, no reservation leaked or shrunk."""

from __future__ import annotations

import random
import threading
from decimal import Decimal

import pytest

from ledger.budget import RunBudget
from ledger.errors import BudgetExceeded


def test_reserve_settle_release_and_the_numbers() -> None:
    budget = RunBudget(Decimal("1.00"))
    a = budget.reserve(Decimal("0.40"), "call a")
    b = budget.reserve(Decimal("0.30"), "call b")
    assert (budget.reserved, budget.in_flight, budget.remaining) == (
        Decimal("0.70"),
        2,
        Decimal("0.30"),
    )
    booked = budget.settle(a, Decimal("0.10"))
    assert booked.flags == ()
    budget.release(b)
    assert (budget.spent, budget.reserved, budget.in_flight) == (Decimal("0.10"), 0, 0)
    assert budget.remaining == Decimal("0.90")


def test_refusal_names_cap_spent_reserved_and_the_call_and_never_shrinks() -> None:
    budget = RunBudget(Decimal("1.00"))
    budget.settle(budget.reserve(Decimal("0.50"), "first"), Decimal("0.50"))
    budget.reserve(Decimal("0.25"), "second")
    with pytest.raises(BudgetExceeded) as err:
        budget.reserve(Decimal("0.26"), "anthropic.messages claude-haiku-4-5")
    message = str(err.value)
    for part in ("$1.00", "$0.50", "$0.25", "$0.26", "claude-haiku-4-5"):
        assert part in message
    # Nothing was held for the refused call, and a call that exactly fits still passes.
    assert budget.reserved == Decimal("0.25")
    assert budget.reserve(Decimal("0.25"), "exact fit").amount == Decimal("0.25")


def test_an_actual_cost_above_the_reservation_is_booked_in_full_and_flagged() -> None:
    budget = RunBudget(Decimal("1.00"))
    r = budget.reserve(Decimal("0.90"), "call")
    booked = budget.settle(r, Decimal("1.20"))
    assert budget.spent == Decimal("1.20")
    assert booked.flags == ("over_reservation", "over_cap")
    assert budget.over_reservation == 1
    assert budget.remaining == Decimal("-0.20")
    with pytest.raises(BudgetExceeded):
        budget.reserve(Decimal("0.01"), "anything")


def test_a_reservation_cannot_be_settled_or_released_twice() -> None:
    budget = RunBudget(Decimal(1))
    r = budget.reserve(Decimal("0.1"), "call")
    budget.release(r)
    with pytest.raises(ValueError, match="not open"):
        budget.settle(r, Decimal("0.1"))
    with pytest.raises(ValueError, match="not open"):
        budget.release(r)
    with pytest.raises(ValueError):
        budget.reserve(Decimal("-1"), "negative")


def test_200_threads_racing_for_the_cap_never_pass_it() -> None:
    cap = Decimal("10.00")
    budget = RunBudget(cap)
    threads = 200
    start = threading.Barrier(threads + 1)
    done = threading.Event()
    violations: list[str] = []
    admitted: list[Decimal] = []
    refused: list[str] = []
    results_lock = threading.Lock()

    def watch() -> None:
        # Samples the budget as often as it can while the calls race.
        while not done.is_set():
            spent, reserved, _ = budget.snapshot()
            if spent + reserved > cap:
                violations.append(f"spent {spent} + reserved {reserved} > {cap}")

    def call(i: int) -> None:
        rng = random.Random(i)
        amount = Decimal(rng.randint(5, 40)) / 100  # 0.05 .. 0.40
        start.wait()
        for attempt in range(3):
            try:
                r = budget.reserve(amount, f"call {i}.{attempt}")
            except BudgetExceeded:
                with results_lock:
                    refused.append(f"{i}.{attempt}")
                continue
            spent, reserved, _ = budget.snapshot()
            if spent + reserved > cap:
                violations.append(f"after reserve: {spent} + {reserved}")
            if rng.random() < 0.2:
                budget.release(r)  # the call never reached the vendor
            else:
                actual = amount * Decimal(rng.randint(0, 100)) / 100
                budget.settle(r, actual)
                with results_lock:
                    admitted.append(actual)

    watcher = threading.Thread(target=watch)
    watcher.start()
    workers = [threading.Thread(target=call, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    start.wait()
    for w in workers:
        w.join()
    done.set()
    watcher.join()

    assert not violations
    assert refused, "the cap should have refused some calls"
    assert admitted
    assert budget.in_flight == 0 and budget.reserved == 0
    assert budget.spent == sum(admitted, Decimal(0))
    assert budget.spent <= cap
