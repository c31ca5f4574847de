"""A throwaway PostgreSQL server for tests: `initdb` into a fresh folder, `pg_ctl start` on a free
port of 127.0.0.1, a new database per test, `pg_ctl stop` at the end.

Debian's `postgresql` package (installed by .ci/run) puts the binaries in
/usr/lib/postgresql/<version>/bin. initdb refuses to run as root, so as root the server runs as
the `postgres` user (`runuser -u postgres`), in a folder it owns outside pytest's root-only
temporary tree. Without the binaries the tests skip, except under CI=true, where they fail.
"""

from __future__ import annotations

import itertools
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


def pg_bin() -> Path | None:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: p.parts[-3])
    found = [p for p in found if p.parts[-3].isdigit()]
    found.sort(key=lambda p: int(p.parts[-3]))
    return found[-1].parent if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PgServer:
    def __init__(self) -> None:
        bindir = pg_bin()
        if bindir is None:
            if os.environ.get("CI") == "true":
                pytest.fail("PostgreSQL is missing (Debian `postgresql`; .ci/run installs it)")
            pytest.skip("PostgreSQL is not installed (apt-get install postgresql)")
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="harness-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self._as: list[str] = []
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres", "postgres")
            self._as = ["runuser", "-u", "postgres", "--"]
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8")
        self._options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=on"
        self._start()
        self._names = itertools.count(1)

    def _run(self, tool: str, *args: str) -> None:
        cmd = [*self._as, str(self.bindir / tool), *args]
        done = subprocess.run(cmd, capture_output=True, text=True, cwd=self.root, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"{tool} failed: {done.stderr or done.stdout}")

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """A new, empty database's URL (one per test, so tests never see each other's rows)."""
        import psycopg

        name = f"t{os.getpid()}_{next(self._names)}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def restart(self) -> None:
        """Stop the server at once (every connection dropped) and start it again."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        self._start()

    def _start(self) -> None:
        log = str(self.root / "log")
        self._run("pg_ctl", "-D", str(self.data), "-l", log, "-o", self._options, "-w", "start")

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


def running_server() -> Iterator[PgServer]:
    """The body of a fixture: a server for the fixture's scope."""
    server = PgServer()
    try:
        yield server
    finally:
        server.stop()
