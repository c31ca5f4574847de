"""The ledger on PostgreSQL: one stage cap for proxies on many machines.

`ledger = "postgresql://user@host/db"` (libpq's URL; a password is better kept in PGPASSWORD or
~/.pgpass than in a study file). The entries are rows of one table, `harness_ledger`, each
holding the very line the file store would write (RFC 8785 bytes, hash-chained), so `verify`
re-hashes rows exactly as it re-hashes a file's lines. Two ledgers share a server in two
databases, or two schemas (`?options=-csearch_path%3Dstudy_b`).

Why the cap holds under concurrency: every transaction starts with
`LOCK TABLE harness_ledger IN EXCLUSIVE MODE`, which queues every other writer (ours on any
machine, and any other INSERT) while plain reads go on. Inside it the store reads the rows
appended since it last looked, the ledger decides against that state, and the new row is
inserted and committed before the lock is let go. The hash chain is appended under the same
lock; `seq` is the primary key and `prev` unique, so even a writer that skipped the lock could
not fork the chain. The lock is a transaction's: a process killed with -9 while holding it
loses its connection, and the server rolls its transaction back (nothing of it happened) and
frees the lock. A committed entry is durable: `synchronous_commit` is set on for the session,
whatever the server's default, so a commit returns only once it is in the server's WAL on disk.
A holder that stalls (a stopped process, a frozen machine) is cut off after
`idle_in_transaction_session_timeout`; a waiter gives up with an error after `lock_timeout`.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from ledger.entries import Entry
from ledger.errors import LedgerCorrupt, LedgerError
from ledger.state import LedgerState
from ledger.store import LedgerStore, scan_lines

if TYPE_CHECKING:
    import psycopg

TABLE = "harness_ledger"
URL_SCHEMES = ("postgresql://", "postgres://")
# One number for the advisory lock that serialises creating the table (CREATE TABLE IF NOT
# EXISTS races with itself on a new database).
_CREATE_LOCK = 0x6C656467  # "ledg"

_CREATE = f"""
CREATE TABLE IF NOT EXISTS {TABLE} (
    seq bigint PRIMARY KEY CHECK (seq >= 1),
    prev text NOT NULL UNIQUE,
    hash text NOT NULL UNIQUE,
    line text NOT NULL
)
"""


def is_postgres_url(location: str) -> bool:
    return location.startswith(URL_SCHEMES)


def has_password(url: str) -> bool:
    """Whether a URL carries a password (in its user part or a `password=` parameter)."""
    parts = urlsplit(url)
    return parts.password is not None or "password=" in parts.query


def printable(url: str) -> str:
    """The URL without its password (user part or `password=` parameter), for logs, errors
    and run.json."""
    parts = urlsplit(url)
    if parts.password is not None:
        host = parts.netloc.rsplit("@", 1)[-1]
        parts = parts._replace(netloc=f"{parts.username or ''}:***@{host}")
    if "password=" in parts.query:
        query = re.sub(r"(^|&)password=[^&]*", r"\1password=***", parts.query)
        parts = parts._replace(query=query)
    return urlunsplit(parts)


class PostgresStore(LedgerStore):
    def __init__(self, url: str, *, lock_timeout: float = 60.0, stall_timeout: float = 60.0):
        self._psycopg = import_psycopg()
        self.url = url
        self.where = printable(url)
        self.warnings: list[str] = []
        self._lock_timeout_ms = int(lock_timeout * 1000)
        self._stall_timeout_ms = int(stall_timeout * 1000)
        self._mutex = threading.Lock()
        self._conn: psycopg.Connection[Any] | None = None
        self._closed = False
        self._state = LedgerState()
        with self.transaction():
            pass  # creates the table if need be, reads and verifies every row

    def _connect(self) -> psycopg.Connection[Any]:
        if self._conn is not None and not self._conn.closed:
            return self._conn
        conn = None
        try:
            conn = self._psycopg.connect(
                self.url,
                autocommit=True,  # transaction() then issues BEGIN and COMMIT itself
                connect_timeout=10,
                application_name="harness-ledger",
                # A peer machine that vanishes must not hold the lock until TCP gives up.
                keepalives=1,
                keepalives_idle=10,
                keepalives_interval=5,
                keepalives_count=3,
            )
            conn.execute("SET synchronous_commit = on")
            conn.execute(f"SET lock_timeout = {self._lock_timeout_ms}")
            conn.execute(f"SET idle_in_transaction_session_timeout = {self._stall_timeout_ms}")
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_CREATE_LOCK,))
                conn.execute(_CREATE)
        except self._psycopg.Error as e:
            if conn is not None:
                conn.close()
            why = one_line(e)
            raise LedgerError(f"cannot open the PostgreSQL ledger {self.where}: {why}") from e
        self._conn = conn
        return conn

    @contextmanager
    def transaction(self) -> Iterator[LedgerState]:
        with self._mutex:
            if self._closed:
                raise LedgerError(f"ledger {self.where} is closed")
            conn = self._connect()
            committed = False
            try:
                with conn.transaction():
                    conn.execute(f"LOCK TABLE {TABLE} IN EXCLUSIVE MODE")
                    self._refresh(conn)
                    yield self._state
                committed = True
            except self._psycopg.Error as e:
                # A connection lost as it committed may have committed: the state is read back
                # from the table next time, so it shows whatever did happen.
                raise LedgerError(
                    f"PostgreSQL ledger {self.where}: {one_line(e)}; nothing of this "
                    "transaction was recorded, unless the connection was lost as it committed"
                ) from e
            finally:
                if not committed:
                    # Rows this transaction appended were rolled back, but the in-memory state
                    # folded them in: read everything again next time.
                    self._state = LedgerState()
                    if conn.closed or conn.broken:
                        self._conn = None

    def _refresh(self, conn: psycopg.Connection[Any]) -> None:
        rows = conn.execute(
            f"SELECT seq, line FROM {TABLE} WHERE seq > %s ORDER BY seq", (self._state.entries,)
        ).fetchall()
        if not rows:
            return
        first = int(rows[0][0])
        scan = scan_lines(
            [str(line).encode() for _, line in rows],
            self._state,
            first,
            stop_at_first=True,
            may_tear=False,
        )
        if scan.problems:
            line, problem = scan.problems[0]
            raise LedgerCorrupt(self.where, line, problem)

    def append(self, entry: Entry) -> None:
        conn = self._conn
        assert conn is not None, "append outside a transaction"
        line = entry.to_line().rstrip(b"\n").decode()
        conn.execute(
            f"INSERT INTO {TABLE} (seq, prev, hash, line) VALUES (%s, %s, %s, %s)",
            (entry.seq, entry.prev, entry.hash, line),
        )
        self._state.apply(entry)

    def lines(self) -> list[bytes]:
        return read_lines(self.url)

    def close(self) -> None:
        with self._mutex:
            self._closed = True
            if self._conn is not None:
                self._conn.close()
                self._conn = None


def read_lines(url: str) -> list[bytes]:
    """Every row's line in seq order, read without the lock and without changing anything (a
    missing table is an empty ledger)."""
    psycopg = import_psycopg()
    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
            exists = conn.execute("SELECT to_regclass(%s)", (TABLE,)).fetchone()
            if exists is None or exists[0] is None:
                return []
            rows = conn.execute(f"SELECT line FROM {TABLE} ORDER BY seq").fetchall()
    except psycopg.Error as e:
        why = one_line(e)
        raise LedgerError(f"cannot read the PostgreSQL ledger {printable(url)}: {why}") from e
    return [str(line).encode() for (line,) in rows]


def import_psycopg() -> Any:
    try:
        import psycopg
    except ImportError as e:
        raise LedgerError(
            "a PostgreSQL ledger needs psycopg: pip install 'harness[postgres]'"
        ) from e
    return psycopg


def one_line(e: Exception) -> str:
    return " ".join(str(e).split()) or type(e).__name__
