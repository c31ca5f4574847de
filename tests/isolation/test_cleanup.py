"""`harness cleanup` stops what a crashed run left running, and nothing else."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.isolation.pids import start_time
from tests.helpers.studies import harness

pytestmark = pytest.mark.integration


def test_cleanup_stops_leftovers_of_a_crashed_run(tmp_path: Path) -> None:
    leftover = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(300)"], start_new_session=True
    )
    # A harness process that has exited: its run crashed.
    crashed = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    run_dir = tmp_path / "crashed-run"
    run_dir.mkdir()
    (run_dir / "pids.json").write_text(
        json.dumps(
            {
                "harness": {"pid": int(crashed.stdout), "start": "0"},
                "processes": [
                    {
                        "name": "arm",
                        "pid": leftover.pid,
                        "start": start_time(leftover.pid),
                        "command": ["sleep"],
                    },
                    # A pid reused by someone else (start time differs) must be left alone.
                    {"name": "old", "pid": 1, "start": "never", "command": ["x"]},
                ],
            }
        )
    )
    try:
        done = harness("cleanup", "--run-dir", str(tmp_path))
        assert done.returncode == 0, done.stderr
        assert f"stopped arm (pid {leftover.pid})" in done.stdout
        deadline = time.monotonic() + 10
        while leftover.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert leftover.poll() is not None
        assert not (run_dir / "pids.json").exists()
    finally:
        if leftover.poll() is None:
            leftover.kill()
        leftover.wait()
