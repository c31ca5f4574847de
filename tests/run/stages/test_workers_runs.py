"""`--workers N` beyond the plain case (tests/run/stages/test_workers.py): refused connections
named by the study's arm with the worker beside it and charged to the worker's own turn; a memory
study whose results do not depend on N; a run stopped by Ctrl-C or killed with -9 mid-run,
finished by --resume with workers; and one live cap that two workers' calls never pass."""

from __future__ import annotations

import json
import signal
import sys
import time
from decimal import Decimal
from pathlib import Path

import pytest

from tests.datasets.fixtures import locomo_file
from tests.helpers.studies import (
    harness,
    header,
    only_run,
    read_jsonl,
    spawn_harness,
    toy_arm,
    write_study,
)
from tests.helpers.worker_runs import assert_same_records, record_with_workers
from tests.study_builder import StudyBuilder
from tests.toy_arms import TOY_ARMS

pytestmark = pytest.mark.integration
MEMORY_ARM = TOY_ARMS / "memory_arm.py"
# Nothing answers there (TEST-NET-3); the local guard refuses it before a packet leaves.
NOWHERE = "203.0.113.9 81"


def _runs(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if (p / "run.json").exists())


def test_strays_name_the_arm_with_the_worker_and_count_on_their_own_turn(tmp_path: Path) -> None:
    """Each item's arm reaches out once: egress.jsonl names arm `toy` (never `toy@1`) with the
    worker beside it, each turn counts its own attempt whichever worker's watch looked first,
    run.json counts every attempt once, and arm_limits names the arm once."""
    items = [
        {"id": f"s{n}", "clock": "2024-05-01T10:00:00",
         "turns": [{"user": f"connect {NOWHERE}"}, {"user": "sleep 0.4"}]}
        for n in range(6)
    ]  # fmt: skip
    study = write_study(tmp_path / "study", {"toy": toy_arm()}, items, on_stray="fail")
    done = harness("record", str(study), "--run-dir", str(tmp_path / "runs"),
                   "--isolation", "local", "--workers", "2")  # fmt: skip
    run = only_run(tmp_path / "runs")
    assert done.returncode == 1, done.stdout + done.stderr[-3000:]  # strays fail the run
    entries = read_jsonl(run / "egress.jsonl")
    assert {e["arm"] for e in entries} == {"toy"}
    assert {e.get("worker", 0) for e in entries} == {0, 1}  # both workers' copies reached out
    assert sum(e.get("count", 1) for e in entries) == len(items)
    turns = read_jsonl(run / "turns.jsonl")
    connects = [t for t in turns if t["turn"] == 0]
    assert [t["stray_connections"] for t in connects] == [1] * len(items)
    assert all(t["stray_connections"] == 0 for t in turns if t["turn"] == 1)
    study_run = header(run)["study"]
    assert study_run["stray_connections"] == len(items)
    assert study_run["refused"] == {"toy": {"203.0.113.9:81": len(items)}}
    assert study_run["teardown_strays"] == {}
    assert set(study_run["arm_limits"]) == {"toy"}
    seen = read_jsonl(run / "strays_seen.jsonl")
    assert len(seen) == len(entries) and all(s["arm"] == "toy" for s in seen)


def _memory_study(folder: Path) -> Path:
    arms = {
        "kept": {"command": f"{sys.executable} -m arms.retrieval", "env": {}},
        "flat": {"command": f"{sys.executable} {MEMORY_ARM}",
                 "env": {"MEMORY_ARM_STATELESS": "1"}},
    }  # fmt: skip
    builder = StudyBuilder(arms=arms).set(items={"format": "locomo", "path": "locomo10.json"})
    study = builder.write(folder)
    locomo_file(folder, samples=3, questions=4)
    return study


def test_a_memory_study_gives_the_same_records_with_three_workers(tmp_path: Path) -> None:
    """LoCoMo: three conversations of four questions each, on an arm that keeps a store (the
    retrieval arm: one ingestion and snapshot per conversation, embedding and chat calls) and one
    that does not (the history per question):
    with three workers the ingestions, snapshots (their hashes), answers, questions and calls'
    request hashes are those of one worker, and each copy kept its own store."""
    study = _memory_study(tmp_path / "study")
    one, three = (record_with_workers(study, tmp_path / f"runs{n}", "local", n) for n in (1, 3))
    assert_same_records(three, one)
    snapshots = [r for r in read_jsonl(one / "turns.jsonl") if r.get("kind") == "snapshot"]
    assert len(snapshots) == 3  # one per conversation, on the arm that keeps a store
    assert sorted(p.name for p in (three / "snapshots" / "kept").iterdir()) == sorted(
        p.name for p in (one / "snapshots" / "kept").iterdir()
    )
    # The conversations went to different workers, each into its own copy's folder.
    assert (three / "logs" / "kept@1" / "state").is_dir()
    assert (three / "logs" / "kept@2" / "state").is_dir()


SLOW = [
    {"id": f"i{n}", "clock": "2024-05-01T10:00:00",
     "turns": [{"user": "echo first"}, {"user": "sleep 0.5"}]}
    for n in range(9)
]  # fmt: skip
ALL_PAIRS = {(item["id"], arm) for item in SLOW for arm in ("a", "b")}


def _finished(run_dir: Path) -> set[tuple[str, str]]:
    turns = read_jsonl(run_dir / "turns.jsonl")
    pairs = {(t["item"], t["arm"]) for t in turns}
    return {p for p in pairs if sum((t["item"], t["arm"]) == p for t in turns) == 2}


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGKILL])
def test_a_run_of_three_workers_stopped_mid_run_is_finished_by_its_resumption(
    tmp_path: Path, stop: signal.Signals
) -> None:
    """Ctrl-C (the three workers' turns in flight settle) or kill -9 (nothing settles): the
    resumption, with workers too, runs exactly the pairs the stopped run did not finish."""
    study = write_study(tmp_path / "study", {"a": toy_arm(), "b": toy_arm()}, SLOW)
    runs = tmp_path / "runs"
    process = spawn_harness("record", str(study), "--run-dir", str(runs), "--isolation", "local",
                            "--workers", "3")  # fmt: skip
    deadline = time.monotonic() + 120
    while sum(len(read_jsonl(p)) for p in runs.glob("*/turns.jsonl")) < 6:
        assert time.monotonic() < deadline and process.poll() is None
        time.sleep(0.1)
    process.send_signal(stop)
    _, err = process.communicate(timeout=60)
    if stop == signal.SIGKILL:
        harness("cleanup", "--run-dir", str(runs), "--force")  # its proxy and arms, orphaned
    else:
        assert process.returncode == 130, err[-3000:]
    (stopped,) = _runs(runs)
    before = _finished(stopped)
    assert before and before != ALL_PAIRS
    done = harness("record", str(study), "--run-dir", str(runs), "--isolation", "local",
                   "--workers", "2", "--resume", str(stopped))  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    (resumed,) = [p for p in _runs(runs) if p != stopped]
    assert header(resumed)["study"]["passed"] is True
    after = _finished(resumed)
    assert after | before == ALL_PAIRS and not after & before
    # Every line of the resumption is a whole pair: nothing run twice within it either.
    keys = [(t["item"], t["arm"], t["turn"]) for t in read_jsonl(resumed / "turns.jsonl")]
    assert len(keys) == len(set(keys)) == 2 * len(after)


def test_two_workers_draw_on_one_live_cap_that_their_calls_never_pass(tmp_path: Path) -> None:
    """A cap that holds one call's worst case and a little more: the two workers' calls go
    through one proxy and one budget, so whichever call reserves first is the only one that runs
    (a second in flight at once, or any after the first is booked, does not fit), the others are
    refused `over_cap`, the booked spend stays under the cap, and the ledger's audit passes."""
    from tests.fakevendor.server import FakeVendor
    from tests.helpers.gate_studies import gate_study
    from tests.proxy.live_helpers import STUDY_KEYS

    runs = tmp_path / "runs"

    def live(cap: str) -> Path:
        done = harness("live", str(study), "--cap", cap, "--workers", "2", "--run-dir", str(runs),
                       "--isolation", "local", env=STUDY_KEYS)  # fmt: skip
        assert done.returncode in (0, 1), done.stdout + done.stderr[-3000:]  # 1: arms refused
        return max((p for p in _runs(runs) if header(p).get("mode") == "live"),
                   key=lambda p: p.stat().st_mtime)  # fmt: skip

    with FakeVendor() as vendor:
        study = gate_study(tmp_path / "study", vendors={"openai": vendor.url})
        gate = harness("gate", str(study), "--run-dir", str(runs), "--isolation", "local",
                       env=STUDY_KEYS)  # fmt: skip
        assert gate.returncode == 0, gate.stdout + gate.stderr[-3000:]
        probe = read_jsonl(live("2") / "calls.jsonl")
        assert len(probe) == 3 and all(c["outcome"] == "ok" for c in probe)
        held = max(Decimal(c["reserved_usd"]) for c in probe)
        cost = min(Decimal(c["cost_usd"]) for c in probe)
        cap = held + cost / 2  # one worst case fits; a second, or one after a booked call, not
        run = live(str(cap))
    calls = read_jsonl(run / "calls.jsonl")
    refused = [c for c in calls if "over_cap" in c["flags"]]
    assert len(calls) == 3 and len(refused) == 2, json.dumps(calls)[:3000]
    assert sum(Decimal(c["cost_usd"]) for c in calls) <= cap
    audit = harness("audit", str(run))
    assert audit.returncode == 0, audit.stdout + audit.stderr[-2000:]
