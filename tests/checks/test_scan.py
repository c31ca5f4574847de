"""`harness scan`: canaries and forgotten words found in a real record-mode run's bodies, turn
texts and exported store; a canary served before its event voids the arm and fails the command."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from harness.checks.scan import ScanResult
from tests.helpers.studies import harness, only_run, write_study
from tests.toy_arms import TOY_ARMS

pytestmark = pytest.mark.integration

SCAN_ARM = TOY_ARMS / "scan_arm.py"
CANARY = "ZEBRA-7731"
ITEMS = [
    {
        "id": "locker",
        "clock": "2024-05-01T10:00:00",
        "turns": [
            {"user": "Hello there."},
            {"user": f"My locker code is {CANARY} and I play the cello."},
            {"user": "Please forget that I play the cello."},
            {"user": "What do you remember about me?"},
        ],
    },
    {"id": "later", "clock": "2024-06-01T10:00:00", "turns": [{"user": "Hi again."}]},
]


def _record(tmp_path: Path, leak: str) -> tuple[Path, Path]:
    """A record-mode run of one scan toy arm; returns (run dir, the arm's store folder)."""
    store = tmp_path / "store"
    arm = {"command": f"{sys.executable} {SCAN_ARM}", "env": {"SCAN_ARM_STORE": str(store)}}
    if leak:
        arm["env"]["SCAN_ARM_LEAK"] = leak
    study = write_study(tmp_path / "study", {"mem": arm}, ITEMS, deadline_ms=20000)
    runs = tmp_path / "runs"
    done = harness("record", str(study), "--run-dir", str(runs), "--isolation", "local")
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    return only_run(runs), store


@pytest.fixture(scope="module")
def leaky_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    # The arm "already knows" the canary at turn 0: an answer key shipped with the arm.
    return _record(tmp_path_factory.mktemp("leaky"), leak=f"the code {CANARY}")


def _files(folder: Path) -> tuple[Path, Path]:
    canaries, forget = folder / "canaries.jsonl", folder / "forget.toml"
    canaries.write_text(json.dumps({"token": CANARY, "item": "locker", "event_turn": 1}) + "\n")
    forget.write_text('[[forget]]\nword = "cello"\nitem = "locker"\nforget_turn = 2\n')
    return canaries, forget


def test_a_canary_served_before_its_event_voids_the_arm(
    leaky_run: tuple[Path, Path], tmp_path: Path
) -> None:
    run_dir, store = leaky_run
    canaries, forget = _files(tmp_path)
    done = harness(
        "scan", str(run_dir), "--canaries", str(canaries), "--forget", str(forget),
        "--store", f"mem={store}", "--json",
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["arms"]["mem"]["void"] is True
    voiding = [h for h in result["hits"] if h["kind"] == "canary" and h["voids"]]
    # Found in the arm's first request (its system prompt) and its first answer, before the turn
    # that plants it; and in the later item's session, which was never told it at all.
    early = {(h["where"], h["turn"]) for h in voiding if h["relation"] == "before_event"}
    assert early == {("request", 0), ("turn_text", 0)}
    elsewhere = {(h["where"], h["item"]) for h in voiding if h["relation"] == "other_item"}
    assert elsewhere == {("request", "later"), ("turn_text", "later")}
    assert any("before its event turn 1" in r for r in result["arms"]["mem"]["reasons"])
    early_hits = [h for h in voiding if h["relation"] == "before_event"]
    request_hit = next(h for h in early_hits if h["where"] == "request")
    assert isinstance(request_hit["call"], int) and request_hit["time"].startswith("20")
    # After its event the canary is the study doing its job: found, listed, not voiding.
    later = [h for h in result["hits"] if h["kind"] == "canary" and not h["voids"]]
    assert {(h["where"], h["item"], h["turn"]) for h in later if h["where"] != "store"} >= {
        ("request", "locker", 1),
        ("request", "locker", 3),
    }
    assert result["searched"]["bodies"] > 0 and result["searched"]["store_files"] == 2


def test_forgotten_words_are_listed_as_served_and_stored(
    leaky_run: tuple[Path, Path], tmp_path: Path
) -> None:
    run_dir, store = leaky_run
    _, forget = _files(tmp_path)
    done = harness(
        "scan", str(run_dir), "--forget", str(forget), "--store", f"mem={store}", "--json"
    )
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]  # forgetting never voids
    hits = json.loads(done.stdout)["hits"]
    served = {(h["where"], h["item"], h["turn"]) for h in hits if h["relation"] == "after_forget"}
    # The arm kept "cello" in memory and sent it with the next turn's request; the forget turn
    # itself (the user saying the word) and the turns before it are not listed.
    assert ("request", "locker", 3) in served
    assert not {(w, i, t) for w, i, t in served if i == "locker" and t is not None and t <= 2}
    stored = [h for h in hits if h["relation"] == "stored"]
    assert [h["path"] for h in stored] == ["locker.jsonl"]


def test_a_clean_arm_passes_and_the_table_says_what_was_searched(tmp_path: Path) -> None:
    run_dir, store = _record(tmp_path, leak="")
    canaries, _ = _files(tmp_path)
    out = tmp_path / "scan.json"
    done = harness(
        "scan", str(run_dir), "--canaries", str(canaries), "--store", f"mem={store}",
        "--out", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert "VOID" not in done.stdout and "turn_texts" in done.stdout
    saved = ScanResult.model_validate_json(out.read_text())
    assert saved.void_arms == [] and saved.arms["mem"].canary_hits > 0
    # The run's manifest still holds: the scan wrote nothing inside the run.
    assert harness("audit", str(run_dir)).returncode == 0
    inside = harness("scan", str(run_dir), "--canaries", str(canaries), "--out", str(run_dir / "s"))
    assert inside.returncode == 2 and "inside the run" in inside.stderr
    # A misspelt item would void every sighting: refused, naming the items the run has.
    typo = tmp_path / "typo.jsonl"
    typo.write_text(json.dumps({"token": CANARY, "item": "lockr", "event_turn": 1}) + "\n")
    refused = harness("scan", str(run_dir), "--canaries", str(typo))
    assert refused.returncode == 2 and "never ran" in refused.stderr and "locker" in refused.stderr


def test_a_canary_timed_by_the_pinned_clock_and_bad_input_is_one_line(
    leaky_run: tuple[Path, Path], tmp_path: Path
) -> None:
    run_dir, _ = leaky_run
    # Knowable from May 15 on: the June session may show it, the May 1 session may not.
    canaries = tmp_path / "timed.toml"
    canaries.write_text(
        f'[[canary]]\ntoken = "{CANARY}"\nitem = "later"\nevent_time = 2024-05-15T00:00:00\n'
    )
    done = harness("scan", str(run_dir), "--canaries", str(canaries), "--json")
    assert done.returncode == 1, done.stdout + done.stderr[-3000:]
    hits = json.loads(done.stdout)["hits"]
    by_item = {(h["item"], h["relation"], h["voids"]) for h in hits}
    assert by_item == {("locker", "before_event", True), ("later", "after_event", False)}
    assert {h["clock"] for h in hits if h["item"] == "later"} == {"2024-06-01T10:00:00+00:00"}

    untimed = tmp_path / "untimed.jsonl"
    untimed.write_text(json.dumps({"token": CANARY, "item": "later"}) + "\n")
    bad = harness("scan", str(run_dir), "--canaries", str(untimed))
    assert bad.returncode == 2 and "event_turn and event_time" in bad.stderr
    assert "Traceback" not in bad.stderr
    # A store folder that names no arm of the run is refused, not charged to a made-up arm.
    stray = harness("scan", str(run_dir), "--canaries", str(canaries), "--store", str(tmp_path))
    assert stray.returncode == 2 and "--store ARM=DIR" in stray.stderr


def test_a_body_the_scan_cannot_read_voids_its_arm(
    leaky_run: tuple[Path, Path], tmp_path: Path
) -> None:
    # Fail closed: a damaged pack could hide the canary, so the arm cannot be cleared.
    run_dir = tmp_path / "damaged"
    shutil.copytree(leaky_run[0], run_dir)
    pack = run_dir / "bodies" / "pack.bin"
    pack.write_bytes(pack.read_bytes()[: pack.stat().st_size // 2])
    canaries = tmp_path / "none.jsonl"
    canaries.write_text(json.dumps({"token": "NEVER-SEEN-1", "item": "locker", "event_turn": 0}))
    done = harness("scan", str(run_dir), "--canaries", str(canaries), "--json")
    assert done.returncode == 1, done.stdout + done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["hits"] == [] and result["unreadable"]
    assert any("could not be searched" in r for r in result["arms"]["mem"]["reasons"])
