"""Divergences as readable body diffs: harness/checks/body_diff.py on its own, then the gate
and the replay end to end (real processes, the local backend): a changed field shows up in the
diff text stored in gate.json / replay.json and printed under the divergence's heading."""

from __future__ import annotations

import json
from pathlib import Path

from harness.checks.body_diff import LONG, MAX_LINES, MISSING, body_diff
from tests.e2e.test_replay import NO_KEYS, REPLAY_ARM
from tests.helpers.gate_studies import gate_study
from tests.helpers.studies import harness, header, write_study


def test_a_changed_field_shows_as_a_removed_and_an_added_line() -> None:
    a = {"model": "m", "temperature": 0.1, "messages": [{"role": "user", "content": "hi"}]}
    b = {"model": "m", "temperature": 0.7, "messages": [{"role": "user", "content": "hi"}]}
    diff = body_diff(a, b, "first", "second").splitlines()
    assert diff[:2] == ["--- first", "+++ second"]
    assert '-  "temperature": 0.1' in diff and '+  "temperature": 0.7' in diff
    # Unchanged lines are context, not changes.
    assert not [line for line in diff if line.startswith(("-", "+")) and "model" in line]


def test_key_order_is_not_a_difference() -> None:
    assert body_diff({"a": 1, "b": [1, 2]}, {"b": [1, 2], "a": 1}, "x", "y") == ""


def test_a_long_prompt_is_shown_around_its_first_difference() -> None:
    prompt = "word " * 2000
    changed = prompt[:6000] + "Today is 2026-12-01. " + prompt[6000:]
    diff = body_diff({"p": prompt}, {"p": changed}, "x", "y")
    removed = next(line for line in diff.splitlines() if line.startswith('-  "p"'))
    added = next(line for line in diff.splitlines() if line.startswith('+  "p"'))
    assert "Today is 2026-12-01" in added and "Today is" not in removed
    assert "[5940 chars]..." in added and "first difference at 6000" in added
    assert len(added) < 400 and len(prompt) > 10 * LONG


def test_the_diff_is_capped() -> None:
    diff = body_diff({f"k{i}": i for i in range(500)}, {f"k{i}": -i for i in range(500)}, "x", "y")
    lines = diff.splitlines()
    assert len(lines) == MAX_LINES + 1 and lines[-1].endswith("more diff lines)")


def test_a_call_only_one_run_made_is_all_additions() -> None:
    diff = body_diff(MISSING, {"model": "m"}, "first run: no such call", "second").splitlines()
    assert diff[0] == "--- first run: no such call"
    assert '+  "model": "m"' in diff and not [x for x in diff[2:] if x.startswith("-")]


def test_the_gate_stores_and_prints_the_body_diff(tmp_path: Path) -> None:
    study = gate_study(tmp_path / "s", volatile="time")
    runs = tmp_path / "runs"
    done = harness("gate", str(study), "--run-dir", str(runs), "--isolation", "local")
    assert done.returncode == 1, done.stdout + done.stderr[-3000:]
    gate = json.loads(next(runs.glob("*/gate.json")).read_text())
    first = gate["divergences"][0]
    lines = first["body_diff"].splitlines()
    run_ids = [run["run_id"] for run in gate["runs"]]
    assert lines[0].startswith(f"--- first run {run_ids[0]} seq ")
    assert lines[1].startswith(f"+++ second run {run_ids[1]} seq ")
    changed = [line for line in lines[2:] if line.startswith(("-", "+"))]
    assert len(changed) == 2 and all("The request was sent at" in line for line in changed)
    # Printed as one block per divergence, under a heading that names where it happened.
    out = done.stdout
    heading = f"arm toy item {first['item']} turn {first['turn']} call {first['index']}"
    assert heading in out and "(openai.chat)" in out
    assert out.index(heading) < out.index(changed[1].strip()[:40])
    assert all(run["clock_pinning"] in ("libfaketime", "seam-only") for run in gate["runs"])


def test_the_replay_stores_and_prints_the_body_diff(tmp_path: Path) -> None:
    switch = tmp_path / "switch"
    arm = {
        "command": f"python {REPLAY_ARM}",
        "env": {"REPLAY_ARM_SWITCH": str(switch), "ARM_MODEL": "gpt-4.1-mini"},
    }
    items = [{"id": "a", "clock": "2024-05-01T10:00:00", "turns": [{"user": "one"}]}]
    study = write_study(tmp_path / "study", {"toy": arm}, items)
    runs = tmp_path / "runs"
    recorded = harness("record", str(study), "--run-dir", str(runs), "--isolation", "local")
    assert recorded.returncode == 0, recorded.stderr[-3000:]
    (source,) = [p for p in runs.iterdir() if (p / "run.json").exists()]
    switch.write_text("a 0 Also mention the weather.")
    replayed = harness("replay", str(source), "--isolation", "local", env=NO_KEYS)
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr[-3000:]
    (replay,) = [p for p in runs.iterdir() if p != source and header(p)["mode"] == "replay"]
    comparison = json.loads((replay / "replay.json").read_text())
    (divergence,) = comparison["requests"]
    added = [x for x in divergence["body_diff"].splitlines() if x.startswith("+ ")]
    assert any("Also mention the weather." in line for line in added)
    assert divergence["body_diff"].startswith(f"--- recorded {source.name} seq ")
    assert f"    {added[0]}" in replayed.stdout
    assert comparison["clock_pinning"] == ""  # both runs pinned the same way
