"""The local backend's child processes: awaited until their log says they are ready, and a
process that dies first is reported with its exit code and the end of its log."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from harness.isolation import pids
from harness.isolation.base import InfraError
from harness.isolation.local.processes import spawn, terminate, wait_for_line


def test_the_ready_line_is_returned_and_the_process_is_named_in_pids_json(tmp_path: Path) -> None:
    log_path = tmp_path / "child.log"
    script = "import time; print('warming up'); print('READY at 1', flush=True); time.sleep(60)"
    process = spawn(pids.PidFile(tmp_path), "child", [sys.executable, "-c", script], {}, log_path)
    try:
        ready = asyncio.run(
            wait_for_line(process, log_path, 0, lambda line: line.startswith("READY"), "child")
        )
        assert ready == "READY at 1"
        entries = json.loads((tmp_path / pids.FILE).read_text())["processes"]
        assert [(e["name"], e["pid"]) for e in entries] == [("child", process.pid)]
    finally:
        terminate(process, 5.0)
    assert process.returncode is not None


def test_a_process_that_exits_before_it_is_ready_says_why(tmp_path: Path) -> None:
    log_path = tmp_path / "child.log"
    script = "import sys; print('no config file'); sys.exit(3)"
    process = spawn(pids.PidFile(tmp_path), "child", [sys.executable, "-c", script], {}, log_path)
    with pytest.raises(InfraError, match=r"child exited with code 3 .*\n.*no config file"):
        asyncio.run(wait_for_line(process, log_path, 0, lambda line: line == "READY", "child"))


def test_a_command_that_cannot_start_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(InfraError, match="cannot start arm: /nonexistent/run"):
        spawn(pids.PidFile(tmp_path), "arm", ["/nonexistent/run"], {}, tmp_path / "a.log")
