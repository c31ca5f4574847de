"""Clock pinning: every item's first clock reading is its own date, from the write on, with no
wait (libfaketime re-reads its timestamp file on every clock call: harness/isolation/clock.py),
offsets to the microsecond, time.sleep() works under it, local arms start in the study folder
(a relative command runs), run.json says how the clock was pinned, and a replay pinned otherwise
than its recording names the difference first."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from harness.isolation.clock import FAKETIME_ENV, PIN_METHOD, offset_line
from harness.isolation.local import find_libfaketime
from tests.helpers.studies import harness, header, read_jsonl, write_study
from tests.toy_arms import TOY_ARMS

CLOCK_ARM = TOY_ARMS / "clock_arm.py"
DATES = ["2024-05-01T10:00:00", "2023-01-02T03:04:05", "2025-07-04T12:00:00", "2022-03-03T08:00:00"]
NO_FAKETIME = {"HARNESS_FAKETIME": "0"}
needs_libfaketime = pytest.mark.skipif(
    find_libfaketime() is None, reason="libfaketime is not installed (apt-get install libfaketime)"
)


def _study(folder: Path) -> Path:
    folder.mkdir(parents=True)
    shutil.copy(CLOCK_ARM, folder / "clock_arm.py")
    (folder / "note.txt").write_text("next to the study")
    items = [
        {
            "id": f"i{n}",
            "clock": date,
            "turns": [{"user": u} for u in ("opened", "sleep", "cwd", "env", "clock")],
        }
        for n, date in enumerate(DATES)
    ]
    # Relative: found only if the arm starts in the study folder.
    return write_study(folder, {"toy": {"command": "python clock_arm.py"}}, items)


def _texts(run_dir: Path) -> dict[tuple[str, int], str]:
    turns = read_jsonl(run_dir / "turns.jsonl")
    assert all(t["outcome"] == "done" for t in turns), turns
    return {(t["item"], t["turn"]): t["text"] for t in turns}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("clock")
    study = _study(root / "study")
    runs = root / "runs"
    # Started from another folder than the study's: the arm must not depend on harness's cwd.
    done = harness("record", str(study), "--run-dir", str(runs), "--isolation", "local")
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    (run_dir,) = [p for p in runs.iterdir() if (p / "run.json").exists()]
    return {"study": study, "runs": runs, "dir": run_dir, "texts": _texts(run_dir)}


@needs_libfaketime
def test_each_item_sees_its_own_date_from_its_first_clock_call(recorded: dict[str, Any]) -> None:
    assert header(recorded["dir"])["study"]["clock_pinning"] == "libfaketime"
    assert header(recorded["dir"])["study"]["clock_pin"] == PIN_METHOD
    texts = recorded["texts"]
    for n, date in enumerate(DATES):
        pinned = datetime.fromisoformat(date).replace(tzinfo=UTC).timestamp()
        # The arm read the previous item's clock a millisecond before this item was pinned.
        opened = json.loads(texts[(f"i{n}", 0)])["time"]
        assert 0 <= opened - pinned < 60, (date, datetime.fromtimestamp(opened, UTC))
        last = json.loads(texts[(f"i{n}", 4)])
        assert 0 <= last["time"] - pinned < 60 and last["now"].startswith(date[:10])


@needs_libfaketime
@pytest.mark.skipif(shutil.which("gcc") is None, reason="no C compiler for sleepfix.c")
def test_sleep_works_and_the_file_is_reread_on_every_call(recorded: dict[str, Any]) -> None:
    texts = recorded["texts"]
    assert {texts[(f"i{n}", 1)] for n in range(len(DATES))} == {"slept"}
    env = json.loads(texts[("i0", 3)])
    assert env["FAKETIME_NO_CACHE"] == "1" and "FAKETIME_CACHE_DURATION" not in env
    # sleepfix (images/arm/sleepfix.c, built with the host's compiler) before libfaketime.
    assert env["LD_PRELOAD"].split(":")[0].endswith("sleepfix.so")


def test_a_relative_arm_command_runs_in_the_study_folder(recorded: dict[str, Any]) -> None:
    cwd = json.loads(recorded["texts"][("i0", 2)])
    assert cwd == {"cwd": str(recorded["study"].parent.resolve()), "note": "next to the study"}


@needs_libfaketime
def test_a_replay_pinned_otherwise_names_the_difference_first(recorded: dict[str, Any]) -> None:
    replayed = harness(
        "replay", str(recorded["dir"]), "--isolation", "local", env=NO_FAKETIME | NO_KEYS
    )
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr[-3000:]
    (replay,) = [
        p
        for p in recorded["runs"].iterdir()
        if (p / "replay.json").exists() and header(p)["study"]["clock_pinning"] == "seam-only"
    ]
    comparison = json.loads((replay / "replay.json").read_text())
    source_id = header(recorded["dir"])["run_id"]
    assert not comparison["clean"]
    assert comparison["clock_pinning"].startswith(
        f"run {source_id} pinned clocks with libfaketime, run {header(replay)['run_id']} seam-only"
    )
    lines = replayed.stdout.splitlines()
    verdict = next(i for i, line in enumerate(lines) if line.startswith("replay DIVERGED"))
    assert lines[verdict + 1].startswith("  clock pinning differs: run ")


NO_KEYS = {"OPENAI_API_KEY": "", "ANTHROPIC_API_KEY": ""}

# A process that reads its wall clock all the time and answers each line with it.
READER = """
import sys, threading, time
def spin():
    while True:
        time.time()
threading.Thread(target=spin, daemon=True).start()
for _ in sys.stdin:
    print(time.time(), flush=True)
"""


@needs_libfaketime
def test_a_pin_holds_from_its_write_to_the_microsecond_without_a_wait(tmp_path: Path) -> None:
    """Writes at several phases of the real second, each followed at once (no wait) by a clock
    read: the reader sees the new date, never a time before it, and no later than the real
    time that passed since the write."""
    clock = tmp_path / "faketime"
    clock.write_text("+0\n")
    env = {"PATH": os.environ["PATH"], "LD_PRELOAD": str(find_libfaketime())}
    env |= FAKETIME_ENV | {"FAKETIME_TIMESTAMP_FILE": str(clock)}
    reader = subprocess.Popen(
        [sys.executable, "-c", READER], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert reader.stdin is not None and reader.stdout is not None
    try:
        for day in range(1, 8):
            time.sleep(0.13 * day)  # writes at several phases of the second
            # A date with microseconds: the pin keeps them.
            target = datetime.fromtimestamp(time.time() + day * 86400 + 0.123456, UTC)
            written = time.time()
            tmp = clock.with_suffix(".tmp")
            tmp.write_text(offset_line(target, written)[1])
            tmp.replace(clock)
            reader.stdin.write(b"\n")
            reader.stdin.flush()
            seen = float(reader.stdout.readline())
            since = time.time() - written
            assert target.timestamp() - 1e-5 <= seen <= target.timestamp() + since + 1e-5, day
    finally:
        reader.kill()
        reader.wait()


def test_offsets_are_microseconds_rounded_up() -> None:
    assert offset_line(datetime(2024, 5, 1, 10, 0, 0), 1714557599.5) == (0.5, "+0.500000\n")
    assert offset_line(datetime(2024, 5, 1, 10, 0, 0, tzinfo=UTC), 1714557600.0)[1] == (
        "+0.000000\n"
    )
    offset, line = offset_line(datetime(2024, 5, 1, 10, 0, 0, 250, tzinfo=UTC), 1714557700.0)
    assert line == "-99.999750\n" and offset == -99.99975
