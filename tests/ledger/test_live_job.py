"""The live-job slot on each ledger store (`ledger/live_job.py`): one holder at a time, named in
the refusal; a holder killed with -9 is recognised as stale and taken over; the shards of one job
share it, a shard given twice does not; two PostgreSQL schemas are two ledgers."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ledger.live_job import LiveJobBusy, claim, this_process
from tests.pg_server import PgServer, running_server

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def pg() -> Iterator[PgServer]:
    yield from running_server()


@pytest.fixture(params=["file", "postgres"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "file":
        return str(tmp_path / "ledger.jsonl")
    server: PgServer = request.getfixturevalue("pg")
    return server.new_database()


HOLD = """
import sys
from ledger.live_job import claim, this_process
job = claim(sys.argv[1], this_process(sys.argv[2]))
print("held", flush=True)
sys.stdin.read()
"""


def _holder_process(location: str, run_id: str) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, "-c", HOLD, location, run_id],
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert process.stdout is not None and process.stdout.readline() == "held\n"
    return process


def test_a_second_job_is_refused_naming_the_holder_until_it_lets_go(location: str) -> None:
    first = claim(location, this_process("run-a"))
    with pytest.raises(LiveJobBusy, match=r"run run-a \(pid \d+ on .*holds the keys") as e:
        claim(location, this_process("run-b"))
    assert "\n" not in str(e.value) and "this one: run run-b" in str(e.value)
    first.release()
    with claim(location, this_process("run-b")) as second:
        assert second.stale == []


def test_a_holder_killed_with_9_is_taken_over(location: str) -> None:
    holder = _holder_process(location, "run-killed")
    with pytest.raises(LiveJobBusy, match="run run-killed"):
        claim(location, this_process("run-next"))
    holder.kill()
    holder.wait()
    with claim(location, this_process("run-next")) as job:
        assert [s.run_id for s in job.stale] == ["run-killed"]
        assert job.stale[0].pid == holder.pid
    with claim(location, this_process("run-after")) as job:
        assert job.stale == []  # released cleanly: nothing to take over


def test_a_stale_holder_whose_job_still_runs_is_not_taken_over(location: str) -> None:
    holder = _holder_process(location, "run-orphaned")
    holder.kill()
    holder.wait()
    with pytest.raises(LiveJobBusy, match="its proxy still runs"):
        claim(location, this_process("run-next"), leftover=lambda h: "its proxy still runs")
    with claim(location, this_process("run-next")) as job:  # the stale claim was kept
        assert [s.run_id for s in job.stale] == ["run-orphaned"]


def test_the_shards_of_one_job_share_it_and_a_shard_twice_is_refused(location: str) -> None:
    one = claim(location, this_process("s1", job="study-x/3", slot="1"))
    two = claim(location, this_process("s2", job="study-x/3", slot="2"))
    with pytest.raises(LiveJobBusy, match="run s1"):
        claim(location, this_process("s1-again", job="study-x/3", slot="1"))
    with pytest.raises(LiveJobBusy, match=r"run s[12]"):
        claim(location, this_process("other"))
    one.release()
    two.release()
    claim(location, this_process("other")).release()


def test_two_schemas_of_one_database_are_two_ledgers(pg: PgServer) -> None:
    import psycopg

    url = pg.new_database()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA a")
        conn.execute("CREATE SCHEMA b")
    in_a = claim(f"{url}?options=-csearch_path%3Da", this_process("run-a"))
    with claim(f"{url}?options=-csearch_path%3Db", this_process("run-b")):
        pass
    with pytest.raises(LiveJobBusy, match="run run-a"):
        claim(f"{url}?options=-csearch_path%3Da", this_process("run-c"))
    in_a.release()
