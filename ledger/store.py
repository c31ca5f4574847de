"""Where a ledger's entries are kept: one small interface, two stores.

The ledger's rules (reserve before start, refuse past the stage cap, settle with no call in
flight, x1.5 until reconciled, the hash chain) are written once, in `ledger.ledger.Ledger`, over
this interface. A store only has to give the ledger three things:

- `transaction()`: a block that no other writer of the same ledger, in any thread, process or
  machine, runs at the same time, and that yields the state folded from every entry written so
  far (other writers' included). The ledger decides inside it, so "is there room under the cap?"
  and the entry that takes the room are one atomic step;
- `append(entry)`, inside the block: the entry is durable when the block exits without an error,
  and if the block raises, none of its entries happened (and the state does not show them);
- `lines()`: every stored entry's bytes in chain order, for `verify`, without taking the lock.

`ledger.file_store.FileStore` (a JSONL file, an flock; the embedded default) and
`ledger.pg_store.PostgresStore` (one table, a table lock per transaction) implement it.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field

from ledger.entries import Entry, LineProblem, parse_line
from ledger.state import LedgerState


class LedgerStore(ABC):
    """The storage of one ledger. Thread-safe; one handle per process is enough."""

    # The store's location, fit to print (a PostgreSQL URL's password is left out).
    where: str
    # Things the store repaired on opening (a torn last line set aside), for the user to read.
    warnings: list[str]

    @abstractmethod
    def transaction(self) -> AbstractContextManager[LedgerState]:
        """Exclusive against every other writer; yields the up-to-date state (see above)."""

    @abstractmethod
    def append(self, entry: Entry) -> None:
        """Store `entry` (inside `transaction`) and fold it into the state."""

    @abstractmethod
    def lines(self) -> list[bytes]:
        """Every stored entry as bytes, in chain order (a file's raw bytes split on newlines,
        its unfinished tail included as the last element, b'' if none)."""

    @abstractmethod
    def close(self) -> None: ...


@dataclass
class VerifyReport:
    where: str
    entries: int
    head: str
    problems: list[tuple[int, str]]
    torn_tail: str | None = None  # a torn last line is a crash artifact, reported, not fatal

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass
class Scan:
    """The result of reading entries against a chain position."""

    good: int = 0  # complete, valid lines read (a prefix, before any problem)
    good_len: int = 0  # their bytes, newlines included
    torn: bytes | None = None  # an unfinished or unparseable last line (files only)
    problems: list[tuple[int, str]] = field(default_factory=list)  # (line number, what)


def scan_lines(
    lines: Iterable[bytes],
    state: LedgerState,
    first_line: int,
    *,
    stop_at_first: bool,
    may_tear: bool,
) -> Scan:
    """Check entries against the chain and fold them into `state` (mutated in place).

    `lines` is what `LedgerStore.lines` returns. With `may_tear` (a file, written by appends
    that a crash can cut), an unparseable last line is a torn line, set aside, not a problem;
    a transactional store never tears, so there it is a problem like any other.
    """
    scan = Scan()
    items = list(lines)
    complete, tail = (items[:-1], items[-1]) if may_tear and items else (items, b"")
    for i, raw in enumerate(complete):
        lineno = first_line + i
        is_last = i == len(complete) - 1 and not tail
        try:
            entry = parse_line(raw, state.entries + 1, state.head)
            why = state.check_ref(entry.typed())
            if why:
                raise LineProblem(why)
        except LineProblem as e:
            if may_tear and is_last and str(e).startswith("not JSON"):
                # An unparseable final line is what a writer killed mid-append leaves.
                scan.torn = raw + b"\n"
                return scan
            scan.problems.append((lineno, str(e)))
            if stop_at_first:
                return scan
            _resync(raw, state)
            continue
        state.apply(entry)
        if not scan.problems:
            scan.good += 1
            scan.good_len += len(raw) + 1
    if tail:
        scan.torn = tail
    return scan


def _resync(raw: bytes, state: LedgerState) -> None:
    # verify goes on after a bad line to report every problem: continue the chain from the bad
    # line's own seq and hash when it has them, so one edit is not reported N times.
    try:
        body = json.loads(raw)
        state.entries, state.head = int(body["seq"]), str(body["hash"])
    except (ValueError, KeyError, TypeError):
        state.entries += 1
