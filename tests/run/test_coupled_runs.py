"""The coupled example (examples/coupled) recorded on the local backend: every arm's turn t before
any arm's turn t+1, in the study's order, named in turns.jsonl; B's turn context handed to C0, C1
and Z as a system prompt and hashed; the cross-arm gate on C0 -> C1 passing on the right element
and failing on a wrong one (or on a turn where C1 did not fire); a failed pair's follower dropped
from a live run before any spend (run.json says why, `--arm C1` refused); a resumed coupled run
reruns a partly finished item in every arm; an arm that dies mid-item is retried without breaking
the coupling."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from harness.checks.masks import all_masks
from harness.checks.pair_gate import check_pair
from harness.errors import HarnessError
from harness.run.stages.prepare import RunRequest, prepare
from harness.study import load_study
from rundir.calls.packread import PackReader
from rundir.runs.gate_record import GateCounts, GateRecord, GateRun, PairCheck
from tests.helpers.coupled_example import copy_example
from tests.helpers.studies import harness, header, only_run, read_jsonl
from tests.toy_arms import TOY_ARMS

DYING_ARM = TOY_ARMS / "dying_toy_arm.py"
ORDER = ["B", "C0", "C1", "Z"]
ELEMENT = "\n\nThe user sounded frustrated last turn: acknowledge it before anything else."


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(study, run): the example recorded once."""
    base = tmp_path_factory.mktemp("coupled")
    study = copy_example(base / "study")
    done = harness("record", str(study), "--run-dir", str(base / "runs"), "--isolation", "local")
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    return study, only_run(base / "runs")


def test_every_arms_turn_t_runs_before_any_arms_turn_t_plus_1(recorded: tuple[Path, Path]) -> None:
    _, run = recorded
    turns = read_jsonl(run / "turns.jsonl")
    assert {tuple(r["order"]) for r in turns} == {tuple(ORDER)}
    for item, count in (("router", 3), ("garden", 2)):
        ran = [(r["turn"], r["arm"]) for r in turns if r["item"] == item]
        assert ran == [(t, arm) for t in range(count) for arm in ORDER]
        calls = [c for c in read_jsonl(run / "calls.jsonl") if c["item"] == item]
        by_seq = [(c["turn"], c["arm"]) for c in sorted(calls, key=lambda c: c["seq"])]
        assert by_seq == ran  # the calls, as the proxy logged them, in that order too


def test_bs_turn_context_reaches_the_later_arms_as_a_system_prompt(
    recorded: tuple[Path, Path],
) -> None:
    _, run = recorded
    turns = read_jsonl(run / "turns.jsonl")
    calls = {(c["arm"], c["item"], c["turn"]): c for c in read_jsonl(run / "calls.jsonl")}
    pack = PackReader.open(run)
    for b in (r for r in turns if r["arm"] == "B"):
        context = b["addon_returned"]
        assert context.startswith(f"For turn {b['turn']}:") and b["addon_from"] is None
        sha = hashlib.sha256(context.encode()).hexdigest()
        assert b["addon_returned_sha256"] == sha
        for arm in ("C0", "C1", "Z"):
            [r] = [
                r for r in turns if (r["arm"], r["item"], r["turn"]) == (arm, b["item"], b["turn"])
            ]
            assert (r["addon_from"], r["addon_sha256"], r["addon_returned"]) == ("B", sha, None)
            call = calls[(arm, b["item"], b["turn"])]
            body = json.loads(pack.get(call["request_body"]))
            system, *messages = body["messages"]
            assert system["role"] == "system" and context in system["content"]
            assert all(context not in m["content"] for m in messages)  # not the user's


def test_c1_is_answered_by_reuse_except_after_a_firing_and_the_report_counts_it(
    recorded: tuple[Path, Path], tmp_path: Path
) -> None:
    """The example declares reuse C0 -> C1: every C1 main call equal to C0's is a hit (all but
    the turn after router's firing), and section 8 names the hits per pair."""
    _, run = recorded
    c1 = [c for c in read_jsonl(run / "calls.jsonl") if c["arm"] == "C1"]
    hits = {(c["item"], c["turn"]) for c in c1 if c.get("reuse_of") is not None}
    assert hits == {(c["item"], c["turn"]) for c in c1} - {("router", 1)}
    out = tmp_path / "report"
    done = harness("report", str(run), "--out", str(out))
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    line = next(x for x in (out / "report.md").read_text().splitlines() if "Reuse hits" in x)
    assert f"(C1 from C0 {len(hits)}" in line


def _pair_check(study: Path, run: Path, element_line: str) -> PairCheck:
    (study.parent / "elements.txt").write_text(element_line + "\n")
    loaded = load_study(study)
    return check_pair(study.parent, loaded.file.gate.pairs[0], [run], all_masks(loaded))


def test_the_pair_passes_on_the_right_element(recorded: tuple[Path, Path]) -> None:
    study, run = recorded
    result = _pair_check(study, run, "router 0 " + json.dumps(ELEMENT))
    assert result.passed and result.checked == 1 and result.failures == []


def test_a_firing_on_an_items_last_turn_has_nothing_to_check(recorded: tuple[Path, Path]) -> None:
    """router has 3 turns: a firing on its turn 2 has no next turn, and is not counted."""
    study, run = recorded
    lines = "router 0 " + json.dumps(ELEMENT) + '\nrouter 2 "\\n\\nAnything."'
    result = _pair_check(study, run, lines)
    assert result.passed and result.checked == 1 and result.failures == []


def test_the_pair_fails_on_a_wrong_element(recorded: tuple[Path, Path]) -> None:
    study, run = recorded
    result = _pair_check(study, run, 'router 0 "\\n\\nThe user sounded upset."')
    assert not result.passed
    [failure] = result.failures
    assert failure.startswith(f"run {run.name} item router turn 1: C1's request differs from C0's")


def test_the_pair_fails_where_the_follower_did_not_fire(recorded: tuple[Path, Path]) -> None:
    study, run = recorded
    result = _pair_check(study, run, "garden 0 " + json.dumps(ELEMENT))
    assert result.failures == [
        f"run {run.name} item garden turn 1: C1's request is C0's: the element is not in it"
    ]


def _gate(study: Path, runs: Path, run: Path, pair: PairCheck) -> None:
    loaded = load_study(study)
    record = GateRecord(
        gate_id="coupled-gate-test",
        study=loaded.name,
        study_path=str(study),
        study_sha256=loaded.study_sha256,
        compose_sha256=loaded.compose_sha256,
        items_sha256=loaded.items_sha256,
        started="2026-01-01T00:00:00Z",
        ended="2026-01-01T00:00:01Z",
        passed=True,
        masks=[],
        runs=[
            GateRun(run_id=run.name, run_dir=str(run), passed=True, stray_connections=0, calls=1)
        ],
        counts=GateCounts(),
        pairs=[pair],
    )
    (runs / "coupled-gate-test").mkdir(exist_ok=True)
    (runs / "coupled-gate-test" / "gate.json").write_text(record.model_dump_json(by_alias=True))


def _live(study: Path, runs: Path, **fields: Any) -> RunRequest:
    return RunRequest(
        study=load_study(study), mode="live", run_root=runs, cap="1", isolation="local", **fields
    )


def test_live_drops_a_failed_pairs_follower_before_any_spend(
    recorded: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    study, run = recorded
    # prepare() checks the vendor keys before anything starts; nothing is sent here, so any
    # value will do (the record run called both vendors).
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-sent")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-sent")
    runs = run.parent
    _gate(study, runs, run, _pair_check(study, run, 'router 0 "wrong"'))
    plan = prepare(_live(study, runs))  # nothing has started: no proxy, no arm, no spend
    assert plan.arms == ["B", "C0", "Z"]
    saved = header(plan.run_dir)["study"]
    assert saved["arms"] == ["B", "C0", "Z"]
    assert (
        "C1's requests do not differ from C0's by exactly the element"
        in saved["dropped_arms"]["C1"]
    )
    assert saved["dropped_arms"]["C1"].endswith("C0 is the candidate")
    with pytest.raises(HarnessError, match="--arm C1: dropped before any spend"):
        prepare(_live(study, runs, arms=["C1"]))
    (study.parent / "elements.txt").write_text("router 0 changed\n")
    with pytest.raises(HarnessError, match="changed since gate coupled-gate-test"):
        prepare(_live(study, runs))
    _gate(study, runs, run, _pair_check(study, run, "router 0 " + json.dumps(ELEMENT)))
    assert prepare(_live(study, runs)).arms == ORDER  # a passing pair drops nothing


def test_resuming_reruns_a_partly_finished_item_in_every_arm(recorded: tuple[Path, Path]) -> None:
    study, run = recorded
    stopped = run.parent.parent / "stopped" / run.name
    shutil.copytree(run, stopped)
    lines = (stopped / "turns.jsonl").read_text().splitlines()
    last_c1_router = max(
        n for n, line in enumerate(lines) if '"item":"router"' in line and '"arm":"C1"' in line
    )
    del lines[last_c1_router]  # C1 did not finish router: router runs again, in every arm
    (stopped / "turns.jsonl").write_text("\n".join(lines) + "\n")
    plan = prepare(RunRequest(load_study(study), "record", stopped.parent, isolation="local",
                              resume_from=stopped))  # fmt: skip
    assert plan.skip == {("garden", arm) for arm in ORDER}
    assert plan.turns_to_run == 3 * len(ORDER)


def test_an_arm_that_dies_is_retried_and_the_coupling_holds(tmp_path: Path) -> None:
    study = copy_example(tmp_path / "study")
    text = study.read_text().replace(
        '[arms.C0]\ncommand = "python -m arms.toy"',
        f'[arms.C0]\ncommand = "python {DYING_ARM}"',
    )
    marker = tmp_path / "died"
    text = text.replace('ARM_ROLE = "C0",', f'ARM_ROLE = "C0", DIE_MARKER = "{marker}",')
    study.write_text(text)
    done = harness(
        "record", str(study), "--run-dir", str(tmp_path / "runs"), "--isolation", "local"
    )
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    run = only_run(tmp_path / "runs")
    assert marker.exists() and header(run)["study"]["infra_failures"] == 1
    turns = read_jsonl(run / "turns.jsonl")
    c0 = [r for r in turns if r["arm"] == "C0" and r["item"] == "router"]
    assert [(r["turn"], r["attempts"], r["outcome"]) for r in c0] == [
        (0, 2, "done"), (1, 2, "done"), (2, 2, "done"),
    ]  # fmt: skip
    assert all(r["addon_from"] == "B" for r in c0)  # the replayed turn 0 got B's context again
    calls = sorted(read_jsonl(run / "calls.jsonl"), key=lambda c: c["seq"])
    router = [(c["turn"], c["arm"]) for c in calls if c["item"] == "router"]
    # C0's first turn 1 died before its call; its fresh copy replays turn 0, then turn 1, and
    # only then do C1 and Z run turn 1: no arm's turn 2 before every arm's turn 1.
    assert router == [
        (0, "B"), (0, "C0"), (0, "C1"), (0, "Z"),
        (1, "B"), (0, "C0"), (1, "C0"), (1, "C1"), (1, "Z"),
        (2, "B"), (2, "C0"), (2, "C1"), (2, "Z"),
    ]  # fmt: skip


def test_two_workers_give_the_coupled_records_of_one(recorded: tuple[Path, Path]) -> None:
    """Each item runs coupled on one worker: turns.jsonl and the requests do not depend on N."""
    study, run = recorded
    runs = run.parent.parent / "runs-workers"
    done = harness("record", str(study), "--run-dir", str(runs), "--isolation", "local",
                   "--workers", "2")  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    timing = ("run", "first_token_s", "last_token_s")

    def lines(path: Path) -> list[dict[str, Any]]:
        return [{k: v for k, v in r.items() if k not in timing} for r in read_jsonl(path)]

    two = only_run(runs)
    assert lines(two / "turns.jsonl") == lines(run / "turns.jsonl")

    def hashes(r: Path) -> list[tuple[Any, ...]]:
        calls = read_jsonl(r / "calls.jsonl")
        return sorted((c["arm"], c["item"], c["turn"], c["request_hash"]) for c in calls)

    assert hashes(two) == hashes(run)
