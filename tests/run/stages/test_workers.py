"""`--workers N`: items in parallel on N independent sets of arms, one proxy, one run.

An eight-item study of the quickstart's two arms, recorded with 1 and with 4 workers through the
real proxy and stubs, gives the same request hashes and turn texts per (arm, item, turn), the
gate's comparison finds nothing between them, and each item runs once on each arm. A worker whose
arm dies is retried on that worker's fresh arm while the other workers go on. Live with two
workers keeps one ledger whose audit passes. What --workers cannot do is refused in one line
before a run directory exists (tests/run/stages/test_workers_runs.py: strays, memory studies,
resume and the live cap with workers; tests/docker/test_workers_docker.py: the docker backend).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.checks.gate import compare_runs
from harness.checks.masks import all_masks
from harness.study import load_study
from rundir.runs.gate_record import GateCounts
from tests.e2e.test_merge import quickstart_like, record
from tests.helpers.studies import harness, header, read_jsonl, toy_arm, write_study

pytestmark = pytest.mark.integration

EXTRA_ITEMS = [
    {"id": f"extra{n}", "clock": f"2024-0{n + 1}-02T09:00:00", "turns": [{"user": words}]}
    for n, words in enumerate(
        ["I bake rye bread.", "I lost at chess.", "My cat is called Io.", "I run on Fridays."]
    )
] + [
    {
        "id": "two-turns",
        "clock": "2024-11-11T20:00:00",
        "turns": [{"user": "I moved to Ghent."}, {"user": "Where do I live now?"}],
    }
]
TIMING = ("first_token_s", "last_token_s", "run")  # and the run id


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    base = tmp_path_factory.mktemp("workers")
    study = quickstart_like(base / "study", EXTRA_ITEMS)
    one = record(study, base / "one", "--workers", "1")
    four = record(study, base / "four", "--workers", "4")
    yield {"study": study, "one": one, "four": four}


def by_turn(calls: list[dict[str, Any]]) -> dict[tuple[str, str, int], list[str]]:
    hashes: dict[tuple[str, str, int], list[str]] = {}
    for call in calls:
        hashes.setdefault((call["arm"], call["item"], call["turn"]), []).append(
            call["request_hash"]
        )
    return hashes


def test_four_workers_give_the_requests_and_texts_of_one(runs: dict[str, Any]) -> None:
    one, four = runs["one"], runs["four"]
    assert header(one)["study"]["passed"] and header(four)["study"]["passed"]
    calls_one, calls_four = read_jsonl(one / "calls.jsonl"), read_jsonl(four / "calls.jsonl")
    # Every call names the arm, never a worker's instance of it.
    assert {c["arm"] for c in calls_four} == {"bare", "retrieval"}
    assert by_turn(calls_four) == by_turn(calls_one) and len(calls_four) == len(calls_one)

    turns_one, turns_four = read_jsonl(one / "turns.jsonl"), read_jsonl(four / "turns.jsonl")
    texts = {(t["arm"], t["item"], t["turn"]): t["text"] for t in turns_one}
    assert {(t["arm"], t["item"], t["turn"]): t["text"] for t in turns_four} == texts
    # Each item once per arm and turn: 3 items of 3 turns, 4 of 1, one of 2, on two arms.
    keys = [(t["arm"], t["item"], t["turn"]) for t in turns_four]
    assert len(keys) == len(set(keys)) == 2 * (3 * 3 + 4 + 2)
    # turns.jsonl is written in the items' order: the same file, timing aside.
    strip = [{k: v for k, v in t.items() if k not in TIMING} for t in turns_four]
    assert strip == [{k: v for k, v in t.items() if k not in TIMING} for t in turns_one]

    counts = GateCounts()
    assert compare_runs(four, one, all_masks(load_study(runs["study"])), counts) == []
    assert counts.calls_compared == len(calls_one)

    # The round-trip probes are worker 0's: one line per arm and phase, as with one worker.
    def probes(run: Path) -> list[tuple[str, str]]:
        seams = [r for r in read_jsonl(run / "rtt.jsonl") if r["kind"] == "seam"]
        return sorted((r["target"], r["phase"]) for r in seams)

    assert probes(four) == probes(one) and probes(one)
    # The four workers really ran their own arms: worker 3's copy of each arm has its log.
    assert (four / "logs" / "bare@3").is_dir() and (four / "logs" / "retrieval@3").is_dir()


def test_a_recording_of_four_workers_replays_with_two(runs: dict[str, Any], tmp_path: Path) -> None:
    done = harness("replay", str(runs["four"]), "--run-dir", str(tmp_path), "--isolation",
                   "local", "--workers", "2")  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]


def test_an_arm_dying_on_one_worker_does_not_stop_the_others(tmp_path: Path) -> None:
    marker = tmp_path / "died"
    items = [
        {"id": f"i{n}", "clock": "2024-05-01T10:00:00", "turns": [{"user": f"echo item {n}"}]}
        for n in range(6)
    ]
    items.insert(2, {"id": "dies", "clock": "2024-05-01T10:00:00",
                     "turns": [{"user": f"die-once {marker}"}]})  # fmt: skip
    items.insert(4, {"id": "own-error", "clock": "2024-05-01T10:00:00",
                     "turns": [{"user": "fail on purpose"}]})  # fmt: skip
    study = write_study(tmp_path / "study", {"toy": toy_arm()}, items, workers=3)
    done = harness(
        "record", str(study), "--run-dir", str(tmp_path / "runs"), "--isolation", "local"
    )  # fmt: skip  (workers = 3 comes from the study)
    run = next(p for p in (tmp_path / "runs").iterdir() if (p / "run.json").exists())
    turns = {t["item"]: t for t in read_jsonl(run / "turns.jsonl")}
    assert [t["item"] for t in read_jsonl(run / "turns.jsonl")] == [i["id"] for i in items]
    assert turns["dies"]["text"].endswith("survived") and turns["dies"]["attempts"] == 2
    assert turns["own-error"]["outcome"] == "error"
    assert all(turns[f"i{n}"]["text"] == f"item {n}" for n in range(6))
    assert header(run)["study"]["infra_failures"] == 1
    assert (run / "logs" / "toy@2").is_dir()  # a third worker ran
    assert done.returncode == 0, done.stderr[-2000:]  # one error in eight turns: a pass


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--workers", "0", "--isolation", "local"], "--workers must be 1 or more"),
    ],
)
def test_what_workers_cannot_do_is_refused_in_one_line(
    tmp_path: Path, args: list[str], said: str
) -> None:
    items = [{"id": "a", "clock": "2024-05-01T10:00:00", "turns": [{"user": "echo a"}]}]
    study = write_study(tmp_path / "study", {"toy": toy_arm()}, items)
    done = harness("record", str(study), "--run-dir", str(tmp_path / "runs"), *args)
    assert done.returncode != 0 and said in done.stdout + done.stderr
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_live_workers_share_one_ledger_that_audits(tmp_path: Path) -> None:
    """Live with two workers against a fake vendor: one proxy, so one ledger and one cap; the
    run's audit (re-priced calls, the ledger's hash chain) passes."""
    from tests.fakevendor.server import FakeVendor
    from tests.helpers.gate_studies import gate_study
    from tests.proxy.live_helpers import STUDY_KEYS

    runs = tmp_path / "runs"
    with FakeVendor() as vendor:
        study = gate_study(tmp_path / "study", vendors={"openai": vendor.url})
        for command in (["gate", str(study)], ["live", str(study), "--cap", "2", "--workers", "2"]):
            done = harness(*command, "--run-dir", str(runs), "--isolation", "local", env=STUDY_KEYS)
            assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    made = [p for p in runs.iterdir() if (p / "run.json").exists()]
    (run,) = [p for p in made if header(p).get("mode") == "live"]
    calls = read_jsonl(run / "calls.jsonl")
    assert len(calls) == 3 and {c["arm"] for c in calls} == {"toy"}
    assert all(c["outcome"] == "ok" and c["item"] is not None for c in calls)
    assert (run / "logs" / "toy@1").is_dir()  # the second worker's arm ran
    audit = harness("audit", str(run))
    assert audit.returncode == 0, audit.stdout + audit.stderr[-2000:]
