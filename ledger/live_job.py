"""One live job at a time per ledger: the fence around the study's keys.

A live job (`harness live`, a live `harness proxy serve`) claims the ledger's job slot before its
proxy gets the keys and keeps it until the run is settled; a second job on the same ledger is
refused in one line naming the run that holds the keys. The shards of one cluster job are one
job: they share the job's name and each holds a slot of its own (a shard given twice is refused).

Two things are kept apart: the claim (who holds the keys: run id, pid, the process's start time,
host, when) in a registry every job reads, and the claim's liveness, a lock the holder's process
keeps for its whole life and that the operating system (a file's flock) or the server (a
PostgreSQL session's advisory lock) frees when the process dies, `kill -9` included. A claim
whose liveness lock can be taken is stale: its holder died without releasing it; the new job
takes it over and the caller records the takeover in the ledger.

File ledger: the registry is `<ledger>.live.json`, written under the flock of `<ledger>.live.lock`;
each claim's liveness is the flock of `<ledger>.live-<slot>.lock`, held open by the holder. All are
named after the ledger's resolved path (ledger/identity.py), so a symlinked ledger is one slot.
PostgreSQL ledger: the registry is the table `harness_live_jobs`, read and written under a
transaction's advisory lock; each claim's liveness is a session advisory lock of the holder's
own connection, which lives as long as the job.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import socket
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ledger.errors import LedgerError
from ledger.identity import resolved_ledger
from ledger.pg_store import import_psycopg, is_postgres_url, one_line, printable


@dataclass(frozen=True)
class Holder:
    """Who holds (or held) the keys."""

    run_id: str
    job: str  # the job's name: its run id, or a sharded job's shared name
    slot: str  # "" for an unsharded run, else the shard's index
    pid: int
    start: str  # the process's start time in clock ticks since boot (a pid is reused)
    host: str
    since: str  # ISO time the claim was made
    run_dir: str = ""

    @property
    def key(self) -> str:
        return f"{self.job}#{self.slot}"

    def describe(self) -> str:
        return f"run {self.run_id} (pid {self.pid} on {self.host}, since {self.since})"


def this_process(run_id: str, *, job: str = "", slot: str = "", run_dir: str = "") -> Holder:
    pid = os.getpid()
    return Holder(
        run_id=run_id,
        job=job or run_id,
        slot=slot,
        pid=pid,
        start=process_start(pid) or "",
        host=socket.gethostname(),
        since=datetime.now(UTC).isoformat(timespec="seconds"),
        run_dir=run_dir,
    )


def process_start(pid: int) -> str | None:
    """A process's start time in clock ticks since boot, or None if it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]


class LiveJobBusy(LedgerError):
    """Another live job holds the keys of this ledger."""

    def __init__(self, where: str, holder: Holder, wanted: str, why: str = "") -> None:
        self.holder = holder
        super().__init__(
            f"live job refused: {why or holder.describe() + ' holds the keys'} (ledger "
            f"{where}; one live job at a time; this one: run {wanted})"
        )


class _Registry(ABC):
    where: str

    @abstractmethod
    def guard(self) -> Any:
        """A context in which no other job reads or writes the registry."""

    @abstractmethod
    def claims(self) -> list[Holder]: ...

    @abstractmethod
    def save(self, claims: list[Holder]) -> None: ...

    @abstractmethod
    def try_hold(self, key: str) -> bool:
        """Take the liveness lock of `key` for this process's life; False if someone has it."""

    @abstractmethod
    def let_go(self, key: str) -> None: ...

    @abstractmethod
    def close(self) -> None:
        """Let go of every lock this registry holds."""


class LiveJob:
    """A held claim. `stale` lists the claims this job took over (their holders had died)."""

    def __init__(self, registry: _Registry, holder: Holder, stale: list[Holder]) -> None:
        self._registry = registry
        self.holder = holder
        self.stale = stale
        self._held = True

    def release(self) -> None:
        if not self._held:
            return
        self._held = False
        try:
            with self._registry.guard():
                claims = [c for c in self._registry.claims() if c.key != self.holder.key]
                self._registry.save(claims)
        finally:
            self._registry.let_go(self.holder.key)
            self._registry.close()

    def hand_to(self, run_id: str, run_dir: str) -> None:
        """Name another run of this job as the one holding the keys, without letting go: a
        pilot's legs run one after another under one claim, so no other job takes the slot
        between them, and a stale claim names the leg whose processes may still run."""
        if not self._held:
            raise LedgerError(f"the live-job slot of run {self.holder.run_id} was let go")
        holder = replace(self.holder, run_id=run_id, run_dir=run_dir)
        with self._registry.guard():
            claims = [c for c in self._registry.claims() if c.key != holder.key]
            self._registry.save([*claims, holder])
        self.holder = holder

    def __enter__(self) -> LiveJob:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def claim(
    location: Path | str,
    holder: Holder,
    *,
    leftover: Callable[[Holder], str | None] | None = None,
) -> LiveJob:
    """Claim the ledger's live-job slot for `holder`, or raise LiveJobBusy naming the holder.

    `leftover(stale)` may say what of a dead holder's job still runs (its proxy, orphaned by a
    `kill -9` of its harness, has the keys): then the job is not over and the claim is refused.
    """
    registry: _Registry = (
        _PgRegistry(location)
        if isinstance(location, str) and is_postgres_url(location)
        else _FileRegistry(Path(location))
    )
    try:
        with registry.guard():
            stale: list[Holder] = []
            live: list[Holder] = []
            for other in registry.claims():
                if registry.try_hold(other.key):
                    registry.let_go(other.key)  # it was free: its holder is dead
                    still = leftover(other) if leftover else None
                    if still is not None:
                        raise LiveJobBusy(registry.where, other, holder.run_id, still)
                    stale.append(other)
                else:
                    live.append(other)
            for other in live:
                if other.job != holder.job or other.slot == holder.slot:
                    raise LiveJobBusy(registry.where, other, holder.run_id)
            if not registry.try_hold(holder.key):
                raise LedgerError(f"{registry.where}: the live-job lock {holder.key} is taken")
            registry.save([*live, holder])
    except BaseException:
        registry.close()
        raise
    return LiveJob(registry, holder, stale)


def _slot_name(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:16]


class _FileRegistry(_Registry):
    def __init__(self, ledger: Path) -> None:
        self.where = str(ledger)
        self.base = Path(f"{resolved_ledger(ledger)}.live")
        self.base.parent.mkdir(parents=True, exist_ok=True)
        self._held: dict[str, int] = {}

    @contextmanager
    def guard(self) -> Iterator[None]:
        fd = os.open(f"{self.base}.lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # held for milliseconds: wait for it
            yield
        finally:
            os.close(fd)  # closing frees the flock

    def claims(self) -> list[Holder]:
        path = Path(f"{self.base}.json")
        try:
            data = json.loads(path.read_text(encoding="utf-8") or "[]")
        except FileNotFoundError:
            return []
        except ValueError as e:
            raise LedgerError(f"{path}: not the live-job registry this harness writes: {e}") from e
        return [Holder(**row) for row in data]

    def save(self, claims: list[Holder]) -> None:
        path = Path(f"{self.base}.json")
        tmp = path.with_name(path.name + ".tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump([asdict(c) for c in claims], f, indent=1)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)

    def _lock_path(self, key: str) -> str:
        return f"{self.base}-{_slot_name(key)}.lock"

    def try_hold(self, key: str) -> bool:
        if key in self._held:
            return True
        fd = os.open(self._lock_path(key), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self._held[key] = fd
        return True

    def let_go(self, key: str) -> None:
        fd = self._held.pop(key, None)
        if fd is not None:
            os.close(fd)

    def close(self) -> None:
        for key in list(self._held):
            self.let_go(key)


_TABLE = "harness_live_jobs"
_CREATE = f"CREATE TABLE IF NOT EXISTS {_TABLE} (key text PRIMARY KEY, holder text NOT NULL)"
_NAMESPACE = 0x6C697665  # "live": the first key of every advisory lock taken here


def _int4(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big", signed=True)


class _PgRegistry(_Registry):
    def __init__(self, url: str) -> None:
        psycopg = import_psycopg()
        self.where = printable(url)
        self._error = psycopg.Error
        try:
            # Its own session: the liveness locks live exactly as long as this connection.
            self.conn = psycopg.connect(url, autocommit=True, connect_timeout=10)
            row = self.conn.execute("SELECT current_schema()").fetchone()
        except psycopg.Error as e:
            why = one_line(e)
            raise LedgerError(f"cannot open the PostgreSQL ledger {self.where}: {why}") from e
        # Advisory locks are per database: two ledgers in two schemas must not share keys.
        self.schema = str(row[0] if row else "")
        self._held: set[str] = set()

    @contextmanager
    def guard(self) -> Iterator[None]:
        try:
            with self.conn.transaction():
                self.conn.execute(
                    "SELECT pg_advisory_xact_lock(%s, %s)", (_NAMESPACE, _int4(self.schema))
                )
                self.conn.execute(_CREATE)
                yield
        except self._error as e:
            raise LedgerError(f"PostgreSQL ledger {self.where}: {one_line(e)}") from e

    def claims(self) -> list[Holder]:
        rows = self.conn.execute(f"SELECT holder FROM {_TABLE} ORDER BY key").fetchall()
        return [Holder(**json.loads(str(text))) for (text,) in rows]

    def save(self, claims: list[Holder]) -> None:
        self.conn.execute(f"DELETE FROM {_TABLE}")
        for c in claims:
            self.conn.execute(
                f"INSERT INTO {_TABLE} (key, holder) VALUES (%s, %s)",
                (c.key, json.dumps(asdict(c))),
            )

    def _lock_key(self, key: str) -> int:
        return _int4(f"{self.schema}|{key}")

    def try_hold(self, key: str) -> bool:
        if key in self._held:
            return True
        row = self.conn.execute(
            "SELECT pg_try_advisory_lock(%s, %s)", (_NAMESPACE, self._lock_key(key))
        ).fetchone()
        if row and row[0]:
            self._held.add(key)
            return True
        return False

    def let_go(self, key: str) -> None:
        if key in self._held:
            self._held.discard(key)
            with suppress(self._error):
                self.conn.execute(
                    "SELECT pg_advisory_unlock(%s, %s)", (_NAMESPACE, self._lock_key(key))
                )

    def close(self) -> None:
        with suppress(self._error):
            self.conn.close()
