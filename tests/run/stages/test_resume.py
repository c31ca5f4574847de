"""`--resume RUN_DIR`: after Ctrl-C, a new run finishes exactly what the stopped run did not;
a finished run or a changed study is refused before anything starts."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from tests.helpers.studies import (
    harness,
    header,
    read_jsonl,
    spawn_harness,
    toy_arm,
    write_study,
)

pytestmark = pytest.mark.integration

ITEMS = [
    {
        "id": f"i{n}",
        "clock": "2024-05-01T10:00:00",
        "turns": [{"user": "echo first"}, {"user": "sleep 0.5"}],
    }
    for n in range(5)
]
ALL_PAIRS = {(item["id"], arm) for item in ITEMS for arm in ("a", "b")}


def _finished(run_dir: Path) -> set[tuple[str, str]]:
    turns = read_jsonl(run_dir / "turns.jsonl")
    pairs = {(t["item"], t["arm"]) for t in turns}
    return {p for p in pairs if sum((t["item"], t["arm"]) == p for t in turns) == 2}


def _runs(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if (p / "run.json").exists())


def test_a_run_stopped_by_ctrl_c_is_finished_by_its_resumption(tmp_path: Path) -> None:
    study = write_study(tmp_path / "study", {"a": toy_arm(), "b": toy_arm()}, ITEMS)
    runs = tmp_path / "runs"
    process = spawn_harness("record", str(study), "--run-dir", str(runs), "--isolation", "local")
    deadline = time.monotonic() + 120
    while sum(len(read_jsonl(p)) for p in runs.glob("*/turns.jsonl")) < 4:
        assert time.monotonic() < deadline and process.poll() is None
        time.sleep(0.1)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err[-3000:]
    (stopped,) = _runs(runs)
    before = _finished(stopped)
    assert before and before != ALL_PAIRS

    done = harness(
        "record", str(study), "--run-dir", str(runs), "--isolation", "local",
        "--resume", str(stopped),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    (resumed,) = [p for p in _runs(runs) if p != stopped]
    run = header(resumed)["study"]
    assert run["resumed_from"] == str(stopped.resolve()) and run["passed"] is True
    assert run["skipped_pairs"] == len(before)
    after = _finished(resumed)
    # Together they cover the study once: nothing finished is run (or paid for) twice.
    assert after | before == ALL_PAIRS and not after & before
    assert f"resumes {stopped}" in done.stdout

    # The chain is finished: resuming the resumed run has nothing left to do.
    again = harness("record", str(study), "--run-dir", str(runs), "--resume", str(resumed))
    assert again.returncode != 0 and "nothing left to run" in again.stderr


def test_a_changed_study_is_not_resumed(tmp_path: Path) -> None:
    study = write_study(tmp_path / "study", {"a": toy_arm()}, ITEMS[:1])
    runs = tmp_path / "runs"
    first = harness("record", str(study), "--run-dir", str(runs), "--isolation", "local")
    assert first.returncode == 0, first.stderr[-3000:]
    (run_dir,) = _runs(runs)
    study.write_text(
        study.read_text().replace('name = "test"', 'name = "test"\ndeadline_ms = 9000')
    )
    refused = harness("record", str(study), "--run-dir", str(runs), "--resume", str(run_dir))
    assert refused.returncode != 0
    assert "the study file changed since that run" in refused.stderr
    assert _runs(runs) == [run_dir]  # refused before anything started
