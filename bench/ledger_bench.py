"""Durable ledger settlements per second, with an fsync per ledger entry.

    .venv/bin/python bench/ledger_bench.py [--calls 20000] [--threads 8]

Prints three figures, each measured in a fresh ledger in a temporary directory:
- one call per entry: `Ledger.settle_calls([one])` in a loop (the floor: one fsync per call);
- batched: `SettlementWriter` fed by N threads, timed from the first submit until `close()`
  returns, i.e. until every settlement is fsynced;
- 4 processes appending single-call entries at once (lock contention included).
The target from issue 3 is >= 500 durable settlements/s.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import threading
import time
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ledger.entries import CallSettlement  # noqa: E402
from ledger.ledger import Ledger, verify  # noqa: E402
from ledger.settlements import SettlementWriter  # noqa: E402

CENT = Decimal("0.000123")

CHILD = """
import sys, time
from decimal import Decimal
from pathlib import Path
from ledger.entries import CallSettlement
from ledger.ledger import Ledger
led = Ledger(Path(sys.argv[1]))
n = int(sys.argv[2])
while time.time() < float(sys.argv[3]):
    time.sleep(0.001)
for i in range(n):
    led.settle_calls([CallSettlement(run_id="bench", seq=i, cost_usd=Decimal("0.000123"))])
"""


def fresh(tmp: Path, name: str) -> Ledger:
    led = Ledger(tmp / f"{name}.jsonl")
    led.open_stage("bench", Decimal(1_000_000))
    led.reserve_run("bench", Decimal(1000), "bench")
    return led


def one_per_entry(tmp: Path, n: int) -> float:
    led = fresh(tmp, "single")
    start = time.perf_counter()
    for i in range(n):
        led.settle_calls([CallSettlement(run_id="bench", seq=i, cost_usd=CENT)])
    elapsed = time.perf_counter() - start
    led.close()
    return n / elapsed


def batched(tmp: Path, n: int, threads: int) -> tuple[float, int]:
    led = fresh(tmp, "batched")
    writer = SettlementWriter(led, max_items=512, max_delay_ms=10)
    per_thread = n // threads

    def submit(t: int) -> None:
        for i in range(per_thread):
            writer.submit(CallSettlement(run_id="bench", seq=t * per_thread + i, cost_usd=CENT))

    workers = [threading.Thread(target=submit, args=(t,)) for t in range(threads)]
    start = time.perf_counter()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    writer.close()
    elapsed = time.perf_counter() - start
    state = led.state()
    assert state.runs["bench"].calls == per_thread * threads
    led.close()
    return per_thread * threads / elapsed, state.entries - 2


def processes(tmp: Path, n: int, procs: int = 4) -> float:
    led = fresh(tmp, "procs")
    led.close()
    go = time.time() + 3  # let every child finish importing before the clock starts
    children = [
        subprocess.Popen([sys.executable, "-c", CHILD, str(led.path), str(n), str(go)], cwd=ROOT)
        for _ in range(procs)
    ]
    for c in children:
        if c.wait() != 0:
            raise SystemExit("a writer process failed")
    elapsed = time.time() - go
    assert verify(led.path).ok
    return n * procs / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--single", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ledger-bench-") as tmp_name:
        tmp = Path(tmp_name)
        print(f"ledger bench in {tmp} (fsync per entry)")
        rate = one_per_entry(tmp, args.single)
        print(f"  one call per entry:        {rate:10.0f} durable settlements/s")
        rate, entries = batched(tmp, args.calls, args.threads)
        print(
            f"  SettlementWriter batched:  {rate:10.0f} durable settlements/s "
            f"({args.threads} threads, {args.calls} calls in {entries} entries)"
        )
        rate = processes(tmp, args.single // 4)
        print(f"  4 processes, one per entry:{rate:10.0f} durable settlements/s")
        print("  target: >= 500 durable settlements/s")


if __name__ == "__main__":
    main()
