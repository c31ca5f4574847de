"""The ledger's rules hold the same on both stores (the file, PostgreSQL): racing reservations
from several processes never pass a stage cap, a process killed with -9 mid-reservation loses
nothing it was told is booked, verify catches a rewritten entry, and the 1.5x, settle and
refusal rules give the same totals. PostgreSQL is a real server the tests start
(tests/pg_server.py)."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path

import pytest

from ledger.entries import CallSettlement
from ledger.errors import CapExceeded, LedgerCorrupt, LedgerError
from ledger.ledger import Ledger, chain_end, verify
from ledger.pg_store import printable
from tests.pg_server import PgServer, running_server

D = Decimal
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def pg() -> Iterator[PgServer]:
    yield from running_server()


@pytest.fixture(params=["file", "postgres"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new, empty ledger of each store, as the location a user would give."""
    if request.param == "file":
        return str(tmp_path / "ledger.jsonl")
    server: PgServer = request.getfixturevalue("pg")
    return server.new_database()


def rewrite_entry(location: str, seq: int, old: str, new: str) -> None:
    """Tamper with entry `seq` behind the ledger's back, as an attacker with write access would."""
    if "://" in location:
        import psycopg

        with psycopg.connect(location, autocommit=True) as conn:
            conn.execute(
                "UPDATE harness_ledger SET line = replace(line, %s, %s) WHERE seq = %s",
                (old, new, seq),
            )
    else:
        path = Path(location)
        lines = path.read_bytes().split(b"\n")
        lines[seq - 1] = lines[seq - 1].replace(old.encode(), new.encode())
        path.write_bytes(b"\n".join(lines))


def test_the_rules_give_the_same_totals_on_each_store(location: str) -> None:
    with Ledger(location) as led:
        led.open_stage("pilot", D(10))
        led.reserve_run("r1", D(2), "pilot")
        led.settle_calls([CallSettlement(run_id="r1", seq=1, cost_usd=D("1.5"))])
        with pytest.raises(LedgerError, match="in flight"):
            led.settle_run("r1", in_flight=1)
        led.settle_run("r1")
        led.reserve_run("r2", D(7), "pilot")  # 1.5 x 1.5 settled + 7 open = 9.25
        with pytest.raises(CapExceeded):
            led.reserve_run("r3", D(1), "pilot")  # 10.25 > 10: refused, and the refusal kept
        state = led.state()
    assert state.stage_spend("pilot") == D("2.25")
    assert state.stage_reserved("pilot") == D(7)
    assert state.stages["pilot"].refused == 1
    report = verify(location)
    assert report.ok and report.entries == 6
    assert chain_end(location) == (6, report.head)


def test_two_handles_see_each_others_entries(location: str) -> None:
    a, b = Ledger(location), Ledger(location)
    a.open_stage("s", D(1))
    b.reserve_run("r", D("0.6"), "s")
    with pytest.raises(CapExceeded):
        a.reserve_run("q", D("0.6"), "s")
    a.close()
    b.close()


def test_verify_catches_a_rewritten_entry(location: str) -> None:
    with Ledger(location) as led:
        led.open_stage("pilot", D(10))
        led.reserve_run("r1", D(2), "pilot")
        led.reserve_run("r2", D(3), "pilot")
    rewrite_entry(location, 2, '"cap_usd":"2"', '"cap_usd":"0.2"')
    report = verify(location)
    assert not report.ok
    assert report.problems[0][0] == 2 and "edited" in report.problems[0][1]
    with pytest.raises(LedgerCorrupt, match="edited"):
        Ledger(location)  # a tampered chain is never appended to


RACER = """
import sys
from decimal import Decimal
from ledger.errors import CapExceeded
from ledger.ledger import Ledger

location, name = sys.argv[1], sys.argv[2]
led = Ledger(location)
print("ready", flush=True)
sys.stdin.readline()  # every racer starts at once
for i in range(int(sys.argv[3])):
    try:
        led.reserve_run(f"{name}-{i}", Decimal("0.07"), "race")
        print(f"{name}-{i}", flush=True)
    except CapExceeded:
        pass
led.close()
"""


def start(code: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def test_racing_reservations_from_several_processes_never_pass_the_cap(location: str) -> None:
    with Ledger(location) as led:
        led.open_stage("race", D(1))  # room for 14 runs of 0.07 (0.98), not 15
    racers = [start(RACER, location, f"p{n}", "8") for n in range(5)]  # 40 attempts
    for p in racers:
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    for p in racers:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    told = [line.strip() for p in racers for line in p.communicate(timeout=120)[0].splitlines()]
    assert all(p.returncode == 0 for p in racers)
    with Ledger(location) as led:
        state = led.state()
    assert len(told) == 14 and sorted(state.runs) == sorted(told)
    assert state.stage_reserved("race") == D("0.98") <= state.stages["race"].cap_usd
    assert state.stages["race"].refused == 40 - 14
    assert verify(location).ok


KEEPS_RESERVING = """
import sys
from decimal import Decimal
from ledger.ledger import Ledger

led = Ledger(sys.argv[1])
i = 0
while True:
    led.reserve_run(f"k-{i}", Decimal("0.001"), "kill")
    print(f"k-{i}", flush=True)  # told: the reservation is durable
    i += 1
"""


def test_a_process_killed_with_9_mid_reservation_loses_nothing(location: str) -> None:
    with Ledger(location) as led:
        led.open_stage("kill", D(1000))
    child = start(KEEPS_RESERVING, location)
    assert child.stdout is not None
    seen = [child.stdout.readline().strip() for _ in range(30)]
    child.send_signal(signal.SIGKILL)  # somewhere inside a reservation's transaction
    rest, _ = child.communicate(timeout=30)
    told = seen + rest.split()
    # Another process goes on at once: the killed one's lock is gone and its chain is whole
    # (a torn file line is set aside; a PostgreSQL transaction is rolled back).
    # No wall-clock bound (a loaded machine breaks one): a lock the killed process still held
    # would block this reserve until the test's timeout, which fails it.
    with Ledger(location) as led:
        led.reserve_run("after", D("0.001"), "kill")
        state = led.state()
    assert set(told) <= set(state.runs)  # every reservation it was told of is booked
    assert len(state.runs) - 1 - len(told) in (0, 1)  # at most one committed, not yet told
    assert all(not r.settled for r in state.runs.values())  # counted at full reservation
    assert state.stage_reserved("kill") == D("0.001") * len(state.runs)
    assert verify(location).ok


def test_a_killed_holder_of_the_postgres_lock_frees_it(pg: PgServer) -> None:
    """A process that dies holding the table lock mid-transaction leaves no row and no lock."""
    url = pg.new_database()
    with Ledger(url) as led:
        led.open_stage("s", D(5))
    holder = start(
        "import sys, psycopg\n"
        "c = psycopg.connect(sys.argv[1], autocommit=True)\n"
        "c.execute('BEGIN'); c.execute('LOCK TABLE harness_ledger IN EXCLUSIVE MODE')\n"
        "c.execute(\"INSERT INTO harness_ledger VALUES (2, 'x', 'y', 'half-written')\")\n"
        "print('holding', flush=True); sys.stdin.readline()\n",
        url,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
    holder.send_signal(signal.SIGKILL)
    holder.wait(10)
    with Ledger(url, lock_timeout=10) as led:
        led.reserve_run("r", D(1), "s")
    assert verify(url).ok and verify(url).entries == 2


def test_a_postgres_ledger_fails_closed_and_keeps_its_password_out_of_messages(
    pg: PgServer,
) -> None:
    assert printable("postgresql://u:hunter2@h:5/db") == "postgresql://u:***@h:5/db"
    assert printable("postgresql://h/db?sslmode=require&password=hunter2&x=1") == (
        "postgresql://h/db?sslmode=require&password=***&x=1"
    )
    wrong = f"postgresql://postgres:hunter2@127.0.0.1:{pg.port}/no_such_db"
    with pytest.raises(LedgerError, match="no_such_db") as e:
        Ledger(wrong)
    assert "hunter2" not in str(e.value)
    with pytest.raises(LedgerError, match="only postgresql://"):
        Ledger("mysql://h/db")


def _settle_all(location: str, runs: int) -> Callable[[], None]:
    def work() -> None:
        with Ledger(location) as led:
            for i in range(runs):
                led.settle_calls([CallSettlement(run_id="big", seq=i, cost_usd=D("0.01"))])

    return work


def test_settlements_from_threads_and_a_reader_agree(location: str) -> None:
    import threading

    with Ledger(location) as led:
        led.open_stage("s", D(100))
        led.reserve_run("big", D(50), "s")
    threads = [threading.Thread(target=_settle_all(location, 10)) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with Ledger(location) as led:
        run = led.state().runs["big"]
    assert run.calls == 30 and run.calls_usd == D("0.30")


def test_a_postgres_server_restart_fails_one_call_closed_then_reconnects(pg: PgServer) -> None:
    """The server goes away under an open handle (every connection dropped): the next call
    raises, recording nothing, and the one after reconnects and finds every committed entry."""
    url = pg.new_database()
    led = Ledger(url)
    led.open_stage("s", D(5))
    led.reserve_run("before", D(1), "s")
    pg.restart()
    with pytest.raises(LedgerError, match="nothing of this transaction was recorded"):
        led.reserve_run("lost", D(1), "s")
    led.reserve_run("after", D(1), "s")
    state = led.state()
    led.close()
    assert sorted(state.runs) == ["after", "before"] and state.stage_reserved("s") == D(2)
    assert verify(url).ok and verify(url).entries == 3
