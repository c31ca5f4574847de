"""Group commit for call settlements: one fsynced ledger entry per batch, not per call.

An fsync costs about a millisecond or more, so a proxy that fsynced each call would cap its
throughput there. The writer queues settlements and a background thread writes them as one
`calls_settled` entry every `max_delay_ms` or `max_items`, whichever comes first.

Nothing queued is ever dropped: a failed write puts its batch back at the head of the queue, the
error is raised by the next `submit`/`flush`/`close` (so the proxy stops serving: fail closed), and
`pending()` still returns every settlement that did not reach the disk.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque

from ledger.entries import CallSettlement
from ledger.errors import LedgerError
from ledger.ledger import Ledger


class SettlementWriterError(LedgerError):
    """Settlements could not be made durable; `pending` holds every one not written."""

    def __init__(self, message: str, pending: list[CallSettlement]) -> None:
        super().__init__(message)
        self.pending = pending


class SettlementWriter:
    """Thread-safe; `submit` never blocks on I/O, so asyncio code may call it directly."""

    def __init__(self, ledger: Ledger, *, max_items: int = 512, max_delay_ms: float = 20) -> None:
        if max_items < 1 or max_delay_ms <= 0:
            raise ValueError("max_items must be >= 1 and max_delay_ms > 0")
        self.ledger = ledger
        self.max_items = max_items
        self.max_delay = max_delay_ms / 1000
        self._queue: deque[CallSettlement] = deque()
        self._cond = threading.Condition()
        self._submitted = 0  # settlements ever queued
        self._durable = 0  # settlements ever written and fsynced (a prefix of the submitted)
        self._flush_wanted = 0  # flush() asks for everything up to this count, now
        self._error: Exception | None = None
        self._closing = False
        self._thread = threading.Thread(target=self._run, name="settlement-writer", daemon=True)
        self._thread.start()

    def submit(self, settlement: CallSettlement) -> None:
        with self._cond:
            if self._closing:
                raise LedgerError("settlement writer is closed; the settlement was not queued")
            self._queue.append(settlement)
            self._submitted += 1
            error = self._error
            # The writer sleeps without a timeout while the queue is empty: the first item of a
            # batch must wake it (to start the max_delay clock), a full batch wakes it at once.
            if len(self._queue) == 1 or len(self._queue) >= self.max_items:
                self._cond.notify_all()
        if error is not None:
            # Queued anyway (nothing is dropped), but the caller must learn the ledger is down.
            raise SettlementWriterError(f"ledger writes are failing: {error}", self.pending())

    def pending(self) -> list[CallSettlement]:
        with self._cond:
            return list(self._queue)

    @property
    def durable(self) -> int:
        return self._durable

    def flush(self, timeout: float | None = None) -> None:
        """Return once every settlement submitted before the call is durable in the ledger."""
        with self._cond:
            target = self._submitted
            self._flush_wanted = max(self._flush_wanted, target)
            self._error = None  # let the writer try again now
            self._cond.notify_all()
            deadline = None if timeout is None else time.monotonic() + timeout
            while self._durable < target:
                if self._error is not None:
                    raise SettlementWriterError(
                        f"could not write settlements: {self._error}", list(self._queue)
                    ) from self._error
                if not self._thread.is_alive():
                    self._write_now_locked()
                    continue
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise SettlementWriterError(
                        f"settlements not durable within {timeout}s", list(self._queue)
                    )
                self._cond.wait(left)

    async def aflush(self) -> None:
        await asyncio.to_thread(self.flush)

    def close(self) -> None:
        """Flush everything, then stop the thread. Raises (with `pending`) if a write fails."""
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        self._thread.join()
        with self._cond:
            self._error = None
            while self._queue and self._error is None:
                self._write_now_locked()
            if self._error is not None:
                raise SettlementWriterError(
                    f"could not write settlements: {self._error}", list(self._queue)
                ) from self._error

    def __enter__(self) -> SettlementWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _run(self) -> None:
        with self._cond:
            while True:
                if not self._queue:
                    if self._closing:
                        return
                    self._cond.wait()
                    continue
                if self._error is not None:
                    # Back off instead of spinning on a broken disk; flush() clears the error.
                    if self._closing:
                        return
                    self._cond.wait(self.max_delay)
                    continue
                urgent = (
                    self._closing
                    or len(self._queue) >= self.max_items
                    or self._flush_wanted > self._durable
                )
                if not urgent:
                    # Let the batch fill up; any of the conditions above wakes us early.
                    self._cond.wait(self.max_delay)
                self._write_now_locked()

    def _write_now_locked(self) -> None:
        """Write up to max_items queued settlements (condition held; released for the I/O)."""
        if not self._queue:
            return
        batch = [self._queue.popleft() for _ in range(min(self.max_items, len(self._queue)))]
        self._cond.release()
        try:
            self.ledger.settle_calls(batch)
        except Exception as e:
            error: Exception | None = e
        else:
            error = None
        finally:
            self._cond.acquire()
        if error is not None:
            self._queue.extendleft(reversed(batch))
            self._error = error
        else:
            self._durable += len(batch)
        self._cond.notify_all()
