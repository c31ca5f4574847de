"""The embedded ledger store: an append-only, hash-chained JSONL file shared by every proxy of
one machine (or of one shared file system that honours flock).

Every transaction takes one inter-process file lock (`<ledger>.lock`, beside the ledger's resolved
path: ledger/identity.py), reads what other processes appended since, lets the ledger decide
against that fresh state, and writes and fsyncs its line before the lock is let go, so two
proxies can never both take the last dollar of a stage.

A writer that dies mid-append leaves a torn last line. It is not silently dropped: the next
process to take the lock moves it to `<ledger>.torn-<n>` and reports it (`warnings` and the
log). Anything else wrong with the chain stops the ledger (LedgerCorrupt): totals computed from
a tampered file cannot be trusted with money.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from ledger.entries import Entry
from ledger.errors import LedgerCorrupt, LedgerError
from ledger.identity import resolved_ledger
from ledger.state import LedgerState
from ledger.store import LedgerStore, scan_lines

log = logging.getLogger(__name__)


class FileStore(LedgerStore):
    def __init__(self, path: Path, *, lock_timeout: float = 60.0) -> None:
        self.path = Path(path)
        self.where = str(self.path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.warnings: list[str] = []
        self._mutex = threading.Lock()
        # Threads are serialised by _mutex; the file lock is only for other processes. filelock
        # polls a non-blocking flock; its default 50 ms poll would cap contended appends at ~20/s.
        # Named after the resolved path: every name of this ledger (a symlink) takes one lock.
        self._flock = FileLock(
            f"{resolved_ledger(self.path)}.lock",
            timeout=lock_timeout,
            thread_local=False,
            poll_interval=0.0005,
        )
        self._fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        self._offset = 0
        self._state = LedgerState()
        with self.transaction():
            pass  # reads the whole file, sets a torn tail aside, verifies the chain

    @contextmanager
    def transaction(self) -> Iterator[LedgerState]:
        """Thread mutex, then the inter-process lock, then a refresh from the file."""
        with self._mutex:
            if self._fd < 0:
                raise LedgerError(f"ledger {self.path} is closed")
            try:
                self._flock.acquire()
            except Timeout as e:
                raise LedgerError(
                    f"could not lock {self.path} within {self._flock.timeout}s; another process "
                    "holds it: is a proxy stuck?"
                ) from e
            try:
                self._refresh()
                yield self._state
            finally:
                self._flock.release()

    def _refresh(self) -> None:
        """Fold in whatever other processes appended since we last looked (lock held)."""
        size = os.fstat(self._fd).st_size
        if size < self._offset:
            raise LedgerCorrupt(self.path, self._state.entries, "the file shrank under us")
        if size == self._offset:
            return
        data = os.pread(self._fd, size - self._offset, self._offset)
        first_line = self._state.entries + 1
        scan = scan_lines(
            data.split(b"\n"), self._state, first_line, stop_at_first=True, may_tear=True
        )
        self._offset += scan.good_len
        if scan.problems:
            line, problem = scan.problems[0]
            self._fd_close()
            raise LedgerCorrupt(self.path, line, problem)
        if scan.torn is not None:
            self._set_aside(scan.torn, self._state.entries + 1)

    def _set_aside(self, torn: bytes, lineno: int) -> None:
        n = 1
        while Path(f"{self.path}.torn-{n}").exists():
            n += 1
        side = Path(f"{self.path}.torn-{n}")
        with open(side, "xb") as f:
            f.write(torn)
            f.flush()
            os.fsync(f.fileno())
        # Only after the copy is durable may the ledger lose the bytes.
        os.ftruncate(self._fd, self._offset)
        os.fsync(self._fd)
        _fsync_dir(self.path.parent)
        msg = (
            f"{self.path}:{lineno}: torn last line ({len(torn)} bytes; a writer died "
            f"mid-append) moved to {side.name}; its entry did not happen"
        )
        self.warnings.append(msg)
        log.warning(msg)

    def append(self, entry: Entry) -> None:
        line = entry.to_line()
        try:
            view = memoryview(line)
            while view:
                view = view[os.write(self._fd, view) :]
            os.fdatasync(self._fd)
        except OSError as e:
            # Fail closed; whatever reached the file is read back (or set aside) next time.
            raise LedgerError(f"cannot append to ledger {self.path}: {e}") from e
        self._offset += len(line)
        self._state.apply(entry)

    def lines(self) -> list[bytes]:
        return self.path.read_bytes().split(b"\n")

    def _fd_close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def close(self) -> None:
        with self._mutex:
            self._fd_close()


def file_lines(path: Path) -> list[bytes]:
    """A ledger file's lines without opening (or repairing) it, as `FileStore.lines` gives them."""
    return path.read_bytes().split(b"\n")


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
