"""Shards and `harness merge`: three shards of a quickstart-like study (its two reference arms,
five items) recorded with `--shard I/3` merge into one run that audit passes, that the gate's
comparison finds identical to an unsharded run of the same study (same requests, same turn
texts), that replays offline, and that the report covers item by item. A shard missing, given
twice, unsharded or from another study is refused, naming it."""

from __future__ import annotations

import json
import shutil
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.checks.gate import compare_runs
from harness.checks.masks import all_masks
from harness.study import load_study
from rundir.runs.gate_record import GateCounts
from tests.helpers.shard_runs import same_checkout
from tests.helpers.studies import (
    harness,
    header,
    read_jsonl,
    spawn_harness,
    toy_arm,
    write_study,
)
from tests.study_builder import StudyBuilder
from tests.toy_arms import TOY_ARMS

# The module's shards are five harness runs: a loaded machine takes longer than the default.
pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart"
EXTRA_ITEMS = [
    {"id": "bakery", "clock": "2024-10-01T07:00:00", "turns": [{"user": "I bake rye bread."}]},
    {
        "id": "chess",
        "clock": "2024-11-11T20:00:00",
        "turns": [{"user": "I lost at chess."}, {"user": "What game did I lose?"}],
    },
]


def quickstart_like(folder: Path, extra: list[dict[str, Any]]) -> Path:
    """The quickstart's arms, stubs and items, plus `extra` items."""
    items = read_jsonl(QUICKSTART / "items.jsonl") + extra
    study = StudyBuilder(name="quickstart-shards", items=items, fields={"deadline_ms": 20000})
    for arm, top_k in (("bare", None), ("retrieval", "2")):
        env = {"ARM_MODEL": "gpt-4.1-mini", "ARM_MAX_TOKENS": "256"}
        if top_k:
            env["ARM_TOP_K"] = top_k
        study.arm(arm, f"python -m arms.{arm}", **env)
    path = study.set(pins={"temperature": 0}).write(folder)
    shutil.copy(QUICKSTART / "stubs.toml", folder / "stubs.toml")
    text = path.read_text()
    path.write_text('stubs = "stubs.toml"\n' + text)
    return path


def record(study: Path, runs: Path, *extra: str) -> Path:
    done = harness("record", str(study), "--run-dir", str(runs), "--isolation", "local", *extra)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    made = [p for p in runs.iterdir() if (p / "run.json").exists()]
    return max(made, key=lambda p: p.stat().st_mtime)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    base = tmp_path_factory.mktemp("shards")
    study = quickstart_like(base / "study", EXTRA_ITEMS)
    shards = [record(study, base / f"shard{i}", "--shard", f"{i}/3") for i in (1, 2, 3)]
    whole = record(study, base / "whole")
    other = quickstart_like(base / "other", EXTRA_ITEMS[:1])  # another study: other items
    foreign = record(other, base / "foreign", "--shard", "3/3")
    yield {"base": base, "study": study, "shards": shards, "whole": whole, "foreign": foreign}


def merge(*args: Any, one_checkout: bool = True) -> tuple[int, str]:
    if one_checkout:
        same_checkout([Path(a) for a in args if isinstance(a, Path) and a.is_dir()])
    done = harness("merge", *map(str, args))
    return done.returncode, done.stdout + done.stderr


def test_each_shard_runs_its_items_with_the_study_hash(recorded: dict[str, Any]) -> None:
    whole = header(recorded["whole"])["study"]
    seen: list[str] = []
    for i, run in enumerate(recorded["shards"], 1):
        study = header(run)["study"]
        assert study["shard"]["index"] == i and study["shard"]["count"] == 3
        assert study["study_sha256"] == whole["study_sha256"] and study["passed"]
        assert {t["item"] for t in read_jsonl(run / "turns.jsonl")} == set(study["shard"]["items"])
        seen += study["shard"]["items"]
    assert sorted(seen) == ["bakery", "chess", "garden", "lisbon", "trip"]
    assert [len(header(r)["study"]["shard"]["items"]) for r in recorded["shards"]] == [2, 2, 1]


def test_merged_shards_read_as_one_run(recorded: dict[str, Any]) -> None:
    out = recorded["base"] / "merged"
    code, said = merge(*reversed(recorded["shards"]), "--out", out)  # any order
    assert code == 0, said
    assert "merged 3 shards" in said and "5 items" in said
    run = header(out)
    assert run["run_id"] == "merged" and run["study"]["items"] == 5 and run["study"]["passed"]
    assert [s["index"] for s in run["study"]["merged_from"]] == [1, 2, 3]
    calls = read_jsonl(out / "calls.jsonl")
    assert {c["run_id"] for c in calls} == {"merged"}
    assert len({c["seq"] for c in calls}) == len(calls)  # one numbering, as one run has

    audit = harness("audit", str(out))
    assert audit.returncode == 0, audit.stdout + audit.stderr[-2000:]

    # The gate's comparison: the same masked requests, turn by turn, as the unsharded run.
    whole = recorded["whole"]
    counts = GateCounts()
    masks = all_masks(load_study(recorded["study"]))
    assert compare_runs(out, whole, masks, counts) == []
    assert counts.calls_compared == len(calls) == len(read_jsonl(whole / "calls.jsonl"))
    texts = {(t["arm"], t["item"], t["turn"]): t["text"] for t in read_jsonl(whole / "turns.jsonl")}
    merged = {(t["arm"], t["item"], t["turn"]): t["text"] for t in read_jsonl(out / "turns.jsonl")}
    assert merged == texts and len(texts) == 2 * (3 * 3 + 1 + 2)

    # The canary scan finds the same things in the merged run as in the unsharded one.
    canaries = recorded["base"] / "canaries.jsonl"
    canaries.write_text(
        '{"token": "Osaka", "item": "trip", "event_turn": 0}\n'
        '{"token": "tomatoes", "item": "lisbon", "event_turn": 2}\n'  # another item's word
    )
    found = []
    for run_dir in (out, whole):
        scan = harness("scan", str(run_dir), "--canaries", str(canaries), "--json")
        assert scan.returncode == 1, scan.stderr[-2000:]  # tomatoes, seen in garden: void
        result = json.loads(scan.stdout)
        hits = {(h["arm"], h["where"], h["item"], h["turn"], h["token"]) for h in result["hits"]}
        voided = sorted(name for name, arm in result["arms"].items() if arm["void"])
        found.append((hits, result["searched"], voided))
    assert found[0] == found[1] and found[0][0]

    replay = harness("replay", str(out), "--run-dir", str(recorded["base"] / "replays"),
                     "--isolation", "local")  # fmt: skip
    assert replay.returncode == 0, replay.stdout + replay.stderr[-2000:]

    report = recorded["base"] / "report"
    done = harness("report", str(out), "--format", "md", "--out", str(report))
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    turns = [r for r in read_jsonl(report / "records.jsonl") if r["kind"] == "turn"]
    assert {(r["arm"], r["item"], r["turn"]) for r in turns} == set(texts)


def test_a_missing_shard_is_refused_naming_it(recorded: dict[str, Any]) -> None:
    s1, _, s3 = recorded["shards"]
    code, said = merge(s1, s3, "--out", recorded["base"] / "no2")
    assert code != 0 and "shard 2/3" in said and "missing" in said
    assert not (recorded["base"] / "no2").exists()


def test_a_shard_of_another_study_is_refused_naming_it(recorded: dict[str, Any]) -> None:
    s1, s2, _ = recorded["shards"]
    foreign = recorded["foreign"]
    code, said = merge(s1, s2, foreign, "--out", recorded["base"] / "mixed")
    assert code != 0 and str(foreign) in said and "another study" in said


def test_a_shard_given_twice_or_an_unsharded_run_is_refused(recorded: dict[str, Any]) -> None:
    s1, s2, s3 = recorded["shards"]
    code, said = merge(s1, s2, s2, s3, "--out", recorded["base"] / "twice")
    assert code != 0 and "shard 2/3 is given twice" in said
    code, said = merge(s1, recorded["whole"], "--out", recorded["base"] / "whole2")
    assert code != 0 and f"{recorded['whole']} is not a shard" in said


def test_shards_run_with_other_files_or_limits_are_refused(
    recorded: dict[str, Any], tmp_path: Path
) -> None:
    """Same study hash, but not the same run: another stubs file, another --limit (whose split
    differs), or an item in two shards, each refused naming the shard."""
    copies = []
    for run in recorded["shards"]:
        copies.append(tmp_path / run.name)
        shutil.copytree(run, copies[-1])

    def edit(run: Path, change: Any) -> None:
        data = json.loads((run / "run.json").read_text())
        change(data)
        (run / "run.json").write_text(json.dumps(data))

    edit(copies[2], lambda h: h.update(stubs_sha256="0" * 64))
    code, said = merge(*copies, "--out", tmp_path / "a")
    assert code != 0 and f"{copies[2]} (shard 3/3) is from another study, setup or" in said
    assert "its stubs file (stubs_sha256) is '000" in said

    edit(copies[2], lambda h: h.update(stubs_sha256=header(copies[0])["stubs_sha256"]))
    edit(copies[2], lambda h: h["study"]["shard"].update(of_items=4))
    code, said = merge(*copies, "--out", tmp_path / "b")
    assert code != 0 and "item count (--limit)" in said

    edit(copies[2], lambda h: h["study"]["shard"].update(of_items=5, items=["trip", "lisbon"]))
    code, said = merge(*copies, "--out", tmp_path / "c")
    assert code != 0 and "item 'lisbon' is in two shards" in said


def _copies(recorded: dict[str, Any], folder: Path) -> list[Path]:
    copies = []
    for run in recorded["shards"]:
        copies.append(folder / run.name)
        shutil.copytree(run, copies[-1])
    return copies


def _edit_header(run: Path, change: Any) -> None:
    data = json.loads((run / "run.json").read_text())
    change(data)
    (run / "run.json").write_text(json.dumps(data))


def test_a_shard_edited_after_its_run_is_refused_naming_the_file(
    recorded: dict[str, Any], tmp_path: Path
) -> None:
    copies = _copies(recorded, tmp_path)
    turns = copies[1] / "turns.jsonl"
    first, *rest = turns.read_text().split("\n")
    turn = json.loads(first)
    turn["text"] = "an answer the arm never gave"  # its own audit fails; so must the merge
    turns.write_text("\n".join([json.dumps(turn), *rest]))
    code, said = merge(*copies, "--out", tmp_path / "merged")
    assert code != 0 and not (tmp_path / "merged").exists()
    assert f"{copies[1]} (shard 2/3) was edited after its run: turns.jsonl: changed" in said


def test_shards_of_another_harness_commit_are_refused_naming_it(
    recorded: dict[str, Any], tmp_path: Path
) -> None:
    copies = _copies(recorded, tmp_path)
    same_checkout(copies)
    _edit_header(copies[2], lambda h: h["manifest"].update(tool_commit="f" * 40))
    code, said = merge(*copies, "--out", tmp_path / "merged", one_checkout=False)
    assert code != 0 and f"{copies[2]} (shard 3/3) is from another study, setup or" in said
    assert "its harness commit (tool_commit) is 'ffff" in said


def test_a_failed_shard_s_reason_is_carried_and_the_merged_audit_rechecks_shards(
    recorded: dict[str, Any], tmp_path: Path
) -> None:
    copies = _copies(recorded, tmp_path)
    why = "completed no turn (its first failed turn: lisbon turn 0, error)"
    _edit_header(
        copies[1], lambda h: h["study"].update(passed=False, arm_failures={"bare": why})
    )  # run.json is not in its own manifest: the shard still hashes as sealed
    out = tmp_path / "merged"
    code, said = merge(*copies, "--out", out)
    assert code == 1, said
    assert f"FAILED: shard 2/3 ({copies[1].resolve()}): arm 'bare' {why}" in said
    run = header(out)["study"]
    assert not run["passed"] and run["arm_failures"] == {"bare": f"in shard 2/3: {why}"}
    shard = run["merged_from"][1]
    assert shard["passed"] is False and why in shard["failure"]

    report = tmp_path / "report"
    done = harness("report", str(out), "--format", "md", "--out", str(report))
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    assert "FAILS the run: in shard 2/3: completed no turn" in (report / "report.md").read_text()

    audit = harness("audit", str(out))
    assert audit.returncode == 0, audit.stdout + audit.stderr[-2000:]
    calls = copies[0] / "calls.jsonl"  # a shard edited after the merge: the merged audit sees it
    calls.write_text(calls.read_text() + "\n")
    audit = harness("audit", str(out))
    assert audit.returncode == 1
    found = json.loads((out / "audit.json").read_text())["discrepancies"]
    assert any(
        d["check"] == "shard"
        and d["where"] == "shard 1/3"
        and "calls.jsonl: changed" in d["detail"]
        for d in found
    ), found


SLOW_TURNS = [{"user": "echo hi"}, {"user": "sleep 1"}]
SLOW_ITEMS = [
    {"id": f"s{n}", "clock": "2024-05-01T10:00:00", "turns": SLOW_TURNS} for n in range(6)
]


def _wait_for_turns(runs: Path, n: int, process: Any) -> None:
    deadline = time.monotonic() + 120
    while sum(len(read_jsonl(p)) for p in runs.glob("*/turns.jsonl")) < n:
        assert time.monotonic() < deadline and process.poll() is None
        time.sleep(0.1)


def test_a_killed_or_interrupted_shard_is_refused_and_its_rerun_merges(tmp_path: Path) -> None:
    """kill -9 mid-run leaves a shard with no manifest, Ctrl-C one marked interrupted: merge
    names either; once the shard has run again, a merge of the folder takes the complete run."""
    study = write_study(tmp_path / "study", {"a": toy_arm()}, SLOW_ITEMS)
    root = tmp_path / "runs"
    for index in (1, 3):
        record(study, root, "--shard", f"{index}/3")

    killed = spawn_harness(
        "record", str(study), "--run-dir", str(root), "--isolation", "local", "--shard", "2/3"
    )
    _wait_for_turns(root, 2 * 2 * 2 + 1, killed)  # shards 1 and 3 (2 items of 2 turns), one more
    killed.send_signal(signal.SIGKILL)
    killed.wait(30)
    harness("cleanup", "--run-dir", str(root), "--force")  # its proxy and arm, orphaned
    (dead,) = [p for p in root.iterdir() if header(p).get("manifest") is None]
    code, said = merge(root, "--out", tmp_path / "m1")
    assert code != 0 and f"{dead} (shard 2/3) has not finished" in said

    stopped = spawn_harness(
        "record", str(study), "--run-dir", str(root), "--isolation", "local", "--shard", "2/3"
    )
    _wait_for_turns(root, sum(len(read_jsonl(p)) for p in root.glob("*/turns.jsonl")) + 1, stopped)
    stopped.send_signal(signal.SIGINT)
    stopped.communicate(timeout=60)
    interrupted = max(root.iterdir(), key=lambda p: p.stat().st_mtime)
    assert header(interrupted)["study"]["interrupted"]
    code, said = merge(*[p for p in root.iterdir() if p not in (dead,)], "--out", tmp_path / "m2")
    assert code != 0 and f"{interrupted} (shard 2/3) was interrupted" in said

    rerun = record(study, root, "--shard", "2/3")
    code, said = merge(root, "--out", tmp_path / "m3")  # the folder: the complete shard 2 wins
    assert code == 0, said
    assert f"left out: {dead} (shard 2/3, unfinished (no manifest" in said
    assert f"left out: {interrupted} (shard 2/3, interrupted; {rerun.name} taken: passed)" in said
    merged = header(tmp_path / "m3")["study"]
    assert [Path(s["run_dir"]).name for s in merged["merged_from"]][1] == rerun.name
    assert merged["items"] == len(SLOW_ITEMS) and merged["passed"]


MEMORY_ARM = TOY_ARMS / "memory_arm.py"


@pytest.mark.parametrize("source", ["longmemeval", "locomo"])
def test_memory_study_shards_merge_with_their_questions_and_snapshots(
    tmp_path: Path, source: str
) -> None:
    """Two shards of a memory study: the merged run has every question once in questions.jsonl,
    every ingestion line, and each snapshot line naming a folder of the merged run with the
    hash it was taken with. LoCoMo's conversation is ingested by both shards (its questions are
    split), and its identical store is kept once."""
    from harness.run.memory.snapshot import tree_hash
    from rundir.turns.ingestions import IngestionRecord, SnapshotRecord, read_ingestions
    from rundir.turns.questions import read_questions
    from tests.datasets.fixtures import locomo_file, longmemeval_file

    if source == "longmemeval":
        longmemeval_file(tmp_path, per_type=1)
        items = {"format": "longmemeval", "path": "longmemeval_s.json"}
    else:
        locomo_file(tmp_path, samples=1, questions=4)
        items = {"format": "locomo", "path": "locomo10.json"}
    arm = {"command": f"{sys.executable} {MEMORY_ARM}", "env": {}}
    study = StudyBuilder(arms={"toy": arm}).set(items=items).write(tmp_path)  # type: ignore[arg-type]
    shards = [record(study, tmp_path / f"shard{i}", "--shard", f"{i}/2") for i in (1, 2)]
    asked = [q.item for s in shards for q in read_questions(s / "questions.jsonl")]
    ingested = [
        r
        for s in shards
        for r in read_ingestions(s / "turns.jsonl")
        if isinstance(r, IngestionRecord)
    ]
    out = tmp_path / "merged"
    code, said = merge(*shards, "--out", out)
    assert code == 0, said
    questions = read_questions(out / "questions.jsonl")
    assert sorted(q.item for q in questions) == sorted(set(asked)) and len(asked) >= 3
    assert len({q.item for q in questions}) == len(questions)  # every question once
    assert {q.run for q in questions} == {out.name}
    lines = read_ingestions(out / "turns.jsonl")
    assert len([r for r in lines if isinstance(r, IngestionRecord)]) == len(ingested)
    snapshots = [r for r in lines if isinstance(r, SnapshotRecord)]
    assert snapshots and all(r.run == out.name for r in snapshots)
    for shot in snapshots:
        folder = out / shot.path
        assert folder.is_dir() and tree_hash(folder).sha256 == shot.sha256
    if source == "locomo":  # one conversation, ingested in both shards, one identical copy
        assert len(snapshots) == 2 and {s.path for s in snapshots} == {
            "snapshots/toy/" + snapshots[0].history
        }
    assert not list(out.glob("shards/*/snapshots"))
    done = harness("audit", str(out))
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
