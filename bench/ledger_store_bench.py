"""Run reservations per second on the ledger's two stores: the file, PostgreSQL.

    .venv/bin/python bench/ledger_store_bench.py [--reservations 2000] [--processes 4]

A reservation is `Ledger.reserve_run`: one transaction that takes the store's lock, reads what
other writers appended, checks the stage cap and appends one hash-chained entry, durable before
it returns (the file: fdatasync; PostgreSQL: a synchronous commit, fsync on). Each store gets a
fresh, empty ledger; PostgreSQL is a throwaway server started here (Debian `postgresql`, as the
tests start it: initdb into a temporary folder, run as `postgres` when this runs as root),
reached over TCP on 127.0.0.1. Two figures per store:
- one process reserving in a loop (the latency of one reservation);
- N processes reserving at once, each its share, timed from a common start until the last ends
  (lock contention included; every process's own connection or file handle).
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ledger.ledger import Ledger, verify  # noqa: E402

CHILD = """
import sys, time
from decimal import Decimal
from ledger.ledger import Ledger
led = Ledger(sys.argv[1])
name, n, start = sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
while time.time() < start:
    time.sleep(0.0005)
for i in range(n):
    led.reserve_run(f"{name}-{i}", Decimal("0.01"), "bench")
led.close()
"""


class Postgres:
    """A throwaway server on a free port of 127.0.0.1 (stopped by `stop`)."""

    def __init__(self) -> None:
        found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
        if not found:
            sys.exit("PostgreSQL is not installed: apt-get install postgresql")
        self.bindir = found[-1].parent
        self.root = Path(tempfile.mkdtemp(prefix="harness-pg-bench-"))
        self.prefix: list[str] = []
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres", "postgres")
            self.prefix = ["runuser", "-u", "postgres", "--"]
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        data = str(self.root / "data")
        self._run("initdb", "-D", data, "-U", "postgres", "--auth=trust")
        opts = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1"
        self._run("pg_ctl", "-D", data, "-l", str(self.root / "log"), "-o", opts, "-w", "start")

    def _run(self, tool: str, *args: str) -> None:
        cmd = [*self.prefix, str(self.bindir / tool), *args]
        subprocess.run(cmd, check=True, capture_output=True, cwd=self.root)

    def database(self, name: str) -> str:
        import psycopg

        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def url(self, db: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{db}"

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.root / "data"), "-m", "fast", "-w", "stop")
        shutil.rmtree(self.root, ignore_errors=True)


def opened(location: str) -> Ledger:
    led = Ledger(location)
    led.open_stage("bench", Decimal(1_000_000_000))
    return led


def one_process(location: str, n: int) -> float:
    led = opened(location)
    start = time.perf_counter()
    for i in range(n):
        led.reserve_run(f"solo-{i}", Decimal("0.01"), "bench")
    elapsed = time.perf_counter() - start
    led.close()
    return n / elapsed


def many_processes(location: str, n: int, processes: int) -> float:
    opened(location).close()
    share = n // processes
    start = time.time() + 1.5  # every child imported and connected before the clock starts
    children = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, location, f"p{k}", str(share), str(start)], cwd=ROOT
        )
        for k in range(processes)
    ]
    for child in children:
        if child.wait() != 0:
            sys.exit(f"a reserving process failed ({child.returncode})")
    elapsed = time.time() - start
    report = verify(location)
    assert report.ok and report.entries == 1 + share * processes, report
    return share * processes / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reservations", type=int, default=2000)
    parser.add_argument("--processes", type=int, default=4)
    args = parser.parse_args()
    n, k = args.reservations, args.processes
    pg = Postgres()
    tmp = Path(tempfile.mkdtemp(prefix="harness-ledger-bench-", dir=ROOT / ".cache"))
    try:
        rows = []
        for store, make in (
            ("file", lambda name: str(tmp / f"{name}.jsonl")),
            ("PostgreSQL", pg.database),
        ):
            solo = one_process(make("solo"), n)
            many = many_processes(make("many"), n, k)
            rows.append((store, solo, many))
    finally:
        pg.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"| store | 1 process, reservations/s | {k} processes at once, reservations/s |")
    print("|---|---|---|")
    for store, solo, many in rows:
        print(f"| {store} | {solo:.0f} | {many:.0f} |")


if __name__ == "__main__":
    main()
