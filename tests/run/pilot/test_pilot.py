"""`harness pilot` as a user meets it, live against a fake vendor on the local backend: a legs
file whose projection passes the cap loses legs in its fixed drop order (never one of the first
five) before any spend, the kept legs run as live runs all reserved in ONE ledger stage, and
unit_costs.json holds what each arm's turns cost; a cap the first five alone pass is refused in
one line with nothing spent.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import tomli_w

from tests.fakevendor.server import FakeVendor
from tests.helpers.gate_studies import GATE_ARM
from tests.helpers.studies import REPO, harness, header, read_jsonl
from tests.proxy.live_helpers import STUDY_KEYS
from tests.study_builder import StudyBuilder

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]

ITEMS = [
    {"id": name, "clock": "2024-05-01T10:00:00", "turns": [{"user": "hello"}]}
    for name in ("one", "two", "three")
]
# Five core legs, then three droppable ones whose drop order is not their declared order.
LEG_LIST: list[dict[str, Any]] = [
    {"name": "B-one", "arms": ["B"], "items": ["one"]},
    {"name": "C0-one", "arms": ["C0"], "items": ["one"]},
    {"name": "C1-one", "arms": ["C1"], "items": ["one"]},
    {"name": "B-two", "arms": ["B"], "tasks": ["second"]},
    {"name": "C0-two", "arms": ["C0"], "items": ["two"]},
    {"name": "C1-two", "arms": ["C1"], "items": ["two"]},
    {"name": "B-three", "arms": ["B"], "items": ["three"]},
    {"name": "C0-three", "arms": ["C0"], "items": ["three"]},
]
LEGS: dict[str, Any] = {
    "schema": 1,
    "tasks": {"second": ["tw*"]},
    "legs": LEG_LIST,
    "drop_order": ["B-three", "C1-two", "C0-three"],
}


@pytest.fixture(scope="module")
def gated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path, Path]]:
    base = tmp_path_factory.mktemp("pilot")
    with FakeVendor() as vendor:
        study = StudyBuilder(name="pilot-test", items=ITEMS, fields={"deadline_ms": 20000})
        for arm in ("B", "C0", "C1"):
            study.arm(arm, f"python {GATE_ARM}")
        path = study.set(vendors={"openai": vendor.url}).write(base / "study")
        runs = base / "runs"
        done = harness("gate", str(path), "--run-dir", str(runs), "--isolation", "local")
        assert done.returncode == 0, done.stderr[-3000:]
        legs = base / "legs.toml"
        legs.write_text(tomli_w.dumps(LEGS))
        yield path, runs, legs


def _projection(study: Path, runs: Path, legs: Path) -> dict[str, Decimal]:
    """Each leg's worst case as the pilot projects it (the harness's own code, before spend)."""
    from harness.run.pilot.legs import load_legs
    from harness.run.pilot.pilot import find_record_run, plan
    from harness.study import load_study

    loaded = load_study(study)
    source = find_record_run(loaded, runs, None)
    projections, _, _ = plan(loaded, load_legs(legs), source, Decimal(10**6), "worst")
    return {name: p.worst for name, p in projections.items()}


def test_arms_the_cross_arm_gate_dropped_are_neither_projected_nor_counted(
    gated: tuple[Path, Path, Path],
) -> None:
    from harness.run.pilot.legs import load_legs
    from harness.run.pilot.pilot import find_record_run, plan
    from harness.study import load_study

    study, runs, legs = gated
    loaded = load_study(study)
    source = find_record_run(loaded, runs, None)
    every, _, _ = plan(loaded, load_legs(legs), source, Decimal(10**6), "worst")
    gone, _, _ = plan(loaded, load_legs(legs), source, Decimal(10**6), "worst", {"C1": "why"})
    assert every["C1-one"].calls > 0 and gone["C1-one"].calls == 0  # not refused: skipped
    assert gone["B-one"].worst == every["B-one"].worst > 0


def test_a_pilot_past_its_cap_drops_legs_in_the_fixed_order_and_runs_the_rest_in_one_stage(
    gated: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    study, runs, legs = gated
    worst = _projection(study, runs, legs)
    names = [leg["name"] for leg in LEG_LIST]
    # Room for the five core legs and one more (not two): two legs must go, in drop order.
    cap = sum(worst[n] for n in names[:5]) + worst["C0-three"] + worst["B-three"] / 2
    out = tmp_path / "pilot"
    done = harness(
        "pilot", str(study), "--legs", str(legs), "--cap", str(cap), "--run-dir", str(runs),
        "--isolation", "local", "--out", str(out), "--stage", "pilot-one", env=STUDY_KEYS,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "dropped B-three" in done.stdout and "dropped C1-two" in done.stdout

    plan = json.loads((out / "plan.json").read_text())
    assert plan["dropped"] == ["B-three", "C1-two"]  # the drop order's first two, in order
    assert plan["kept"] == [*names[:5], "C0-three"]
    assert Decimal(plan["cap_usd"]) == cap

    pilot = json.loads((out / "pilot.json").read_text())
    assert [leg["name"] for leg in pilot["legs"]] == plan["kept"] and pilot["passed"]
    run_ids = []
    for leg, spec in zip(
        pilot["legs"], [s for s in LEG_LIST if s["name"] in plan["kept"]], strict=True
    ):
        head = header(Path(leg["run_dir"]))
        assert head["mode"] == "live" and head["study"]["arms"] == spec["arms"]
        assert head["study"]["items"] == 1
        turns = read_jsonl(Path(leg["run_dir"]) / "turns.jsonl")
        assert {(t["arm"], t["item"]) for t in turns} == {
            (spec["arms"][0], spec["name"].split("-")[1])
        }
        run_ids.append(head["run_id"])

    ledger = read_jsonl(study.parent / "ledger.jsonl")
    opened = [e["fields"] for e in ledger if e["kind"] == "stage_opened"]
    assert len(opened) == 1 and opened[0]["stage"] == "pilot-one"
    assert Decimal(opened[0]["cap_usd"]) == cap
    reserved = [e["fields"] for e in ledger if e["kind"] == "run_reserved"]
    assert sorted(r["run_id"] for r in reserved) == sorted(run_ids)
    assert {r["stage"] for r in reserved} == {"pilot-one"}

    units = json.loads((out / "unit_costs.json").read_text())
    assert units["stage"] == "pilot-one"
    assert set(units["arms"]) == {"B", "C0", "C1"}
    for arm, row in units["arms"].items():
        calls = [
            c
            for leg in pilot["legs"]
            for c in read_jsonl(Path(leg["run_dir"]) / "calls.jsonl")
            if c["arm"] == arm
        ]
        spent = sum((Decimal(c["cost_usd"]) for c in calls), Decimal(0))
        assert spent > 0
        assert Decimal(row["cost_usd"]) == spent
        assert Decimal(row["mean_usd_per_turn"]) == spent / row["turns"]
        assert row["input_tokens"] == sum(
            c["tokens"]["input"] + c["tokens"]["cache_read"] + c["tokens"]["cache_write"]
            for c in calls
        )
    assert units["arms"]["C1"]["turns"] == 1 and units["arms"]["B"]["turns"] == 2


def test_a_cap_the_first_five_legs_pass_is_refused_in_one_line_before_any_spend(
    gated: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    study, runs, legs = gated
    worst = _projection(study, runs, legs)
    core = sum(worst[leg["name"]] for leg in LEG_LIST[:5])
    ledger = study.parent / "ledger.jsonl"
    before = read_jsonl(ledger) if ledger.exists() else []
    lives = {p for p in runs.iterdir() if (p / "run.json").exists()}
    done = harness(
        "pilot", str(study), "--legs", str(legs), "--cap", str(core * Decimal("0.9")),
        "--run-dir", str(runs), "--isolation", "local", "--out", str(tmp_path / "p"),
        "--stage", "pilot-refused", env=STUDY_KEYS,
    )  # fmt: skip
    assert done.returncode == 2
    errors = [line for line in done.stderr.splitlines() if line.startswith("harness: error:")]
    assert len(errors) == 1 and "passes the cap" in errors[0], done.stderr
    assert "B-three, C1-two, C0-three" in errors[0]  # every droppable leg went first
    assert (
        read_jsonl(ledger) if ledger.exists() else []
    ) == before  # no stage opened, nothing reserved
    assert {p for p in runs.iterdir() if (p / "run.json").exists()} == lives


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--cap", "ten"], "--cap 'ten' is not an amount in USD"),
        (["--cap", "-1"], "--cap '-1' is negative"),
        (["--cap", "$10"], "no $ or USD"),
        (["--cap", "10", "--basis", "best"], "--basis 'best' is not one of worst, expected"),
        (["--cap", "10"], "no passing record run of this study"),
    ],
)
def test_a_bad_cap_basis_or_a_study_never_recorded_is_refused_in_one_line(
    tmp_path: Path, args: list[str], words: str
) -> None:
    study = StudyBuilder(name="pilot-refused", items=ITEMS).arm("B", f"python {GATE_ARM}")
    path = study.write(tmp_path / "study")
    legs = tmp_path / "legs.toml"
    legs.write_text(tomli_w.dumps({"schema": 1, "legs": [{"name": "only"}]}))
    runs = tmp_path / "runs"
    runs.mkdir()
    done = harness("pilot", str(path), "--legs", str(legs), "--run-dir", str(runs), *args)
    assert done.returncode == 2
    errors = [line for line in done.stderr.splitlines() if line.startswith("harness: error:")]
    assert len(errors) == 1 and words in errors[0], done.stderr
    assert list(runs.iterdir()) == [] and not (tmp_path / "study" / "ledger.jsonl").exists()


def test_no_other_live_job_takes_the_keys_between_two_legs(
    gated: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    """A hostile job claims the ledger's slot whenever it is free and then keeps it: a pilot that
    let go between legs would find its next leg refused. The pilot holds it from the first leg
    to the last, so every leg runs and the intruder gets the slot only once the pilot is over."""
    from ledger.live_job import LiveJob, LiveJobBusy, claim, this_process

    study, runs, _ = gated
    legs = tmp_path / "legs.toml"
    two = [{"name": n, "arms": ["B"], "items": [n]} for n in ("one", "two")]
    legs.write_text(tomli_w.dumps({"schema": 1, "legs": two}))
    ledger = study.parent / "ledger.jsonl"
    registry = Path(f"{ledger.resolve()}.live.json")
    pilot = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "pilot", str(study), "--legs", str(legs),
         "--cap", "50", "--run-dir", str(runs), "--isolation", "local",
         "--out", str(tmp_path / "p"), "--stage", "pilot-held", "--skip-suite"],
        cwd=REPO, env={**os.environ, "HARNESS_NO_PROGRESS": "1", **STUDY_KEYS},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    taken: list[LiveJob] = []
    misses = 0

    def intrude() -> None:
        nonlocal misses
        while pilot.poll() is None:
            held = registry.is_file() and any(
                c["pid"] == pilot.pid for c in json.loads(registry.read_text() or "[]")
            )
            if held or misses:  # only once the pilot has claimed it first
                try:
                    taken.append(claim(ledger, this_process("intruder")))
                    return
                except LiveJobBusy:
                    misses += 1
            time.sleep(0.002)

    thread = threading.Thread(target=intrude)
    thread.start()
    _, err = pilot.communicate(timeout=900)
    thread.join()
    for job in taken:
        job.release()
    assert pilot.returncode == 0, err[-3000:]
    result = json.loads((tmp_path / "p" / "pilot.json").read_text())
    assert [leg["name"] for leg in result["legs"]] == ["one", "two"] and result["passed"]
    assert misses > 0  # the intruder tried while the pilot ran, and was refused every time


def test_a_missing_key_or_ledger_repository_is_refused_before_the_stage_opens(
    gated: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    study, runs, legs = gated
    ledger = study.parent / "ledger.jsonl"
    before = ledger.read_bytes() if ledger.exists() else b""
    lives = set(runs.iterdir())
    for env, words in (
        ({**STUDY_KEYS, "OPENAI_API_KEY": None}, "OPENAI_API_KEY is not set"),
        ({**STUDY_KEYS, "HARNESS_LEDGER_GIT": str(tmp_path / "no.git")}, "ledger_repo: "),
    ):
        done = harness(
            "pilot", str(study), "--legs", str(legs), "--cap", "50", "--run-dir", str(runs),
            "--isolation", "local", "--out", str(tmp_path / "p"), "--stage", "pilot-nokey",
            env=env,
        )  # fmt: skip
        assert done.returncode == 2
        errors = [line for line in done.stderr.splitlines() if line.startswith("harness: error:")]
        assert len(errors) == 1 and words in errors[0], done.stderr
        assert (ledger.read_bytes() if ledger.exists() else b"") == before  # no stage opened
        assert set(runs.iterdir()) == lives and not (tmp_path / "p").exists()
