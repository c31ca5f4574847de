"""`pids.json` in a run directory: the processes a run started, so `harness cleanup` can stop
what a crashed run left behind.

Each entry keeps the process's start time (from /proc) next to its pid: after a crash the pid may
have been reused by an unrelated process, which must never be killed.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from pathlib import Path
from typing import Any

from rundir.atomic import write_atomic

FILE = "pids.json"


def start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot, or None if it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may contain spaces: fields after its closing parenthesis.
    return stat.rsplit(")", 1)[1].split()[19]


def alive(entry: dict[str, Any]) -> bool:
    return start_time(int(entry["pid"])) == entry.get("start")


class PidFile:
    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / FILE
        self.data: dict[str, Any] = {
            "harness": {"pid": os.getpid(), "start": start_time(os.getpid())},
            "processes": [],
        }

    def add(self, name: str, pid: int, command: list[str]) -> None:
        self.data["processes"].append(
            {"name": name, "pid": pid, "start": start_time(pid), "command": command}
        )
        self.write()

    def write(self) -> None:
        """The file as it stands (the harness, the processes added so far)."""
        write_atomic(self.path, json.dumps(self.data, indent=2))

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)


def cleanup(run_root: Path, *, force: bool = False) -> list[str]:
    """Stop leftover processes of crashed runs under `run_root`; returns what was done.

    A run whose harness process still runs is left alone unless `force`.
    """
    done: list[str] = []
    for pid_file in sorted(run_root.glob(f"*/{FILE}")):
        try:
            data = json.loads(pid_file.read_text())
        except (OSError, ValueError):
            done.append(f"{pid_file}: unreadable, removed")
            pid_file.unlink(missing_ok=True)
            continue
        if alive(data["harness"]) and not force:
            done.append(f"{pid_file.parent.name}: still running (pid {data['harness']['pid']})")
            continue
        leftovers = [e for e in data["processes"] if alive(e)]
        for entry in leftovers:
            _kill_group(int(entry["pid"]), signal.SIGTERM)
        deadline = time.monotonic() + 10
        while any(alive(e) for e in leftovers) and time.monotonic() < deadline:
            time.sleep(0.1)
        for entry in leftovers:
            if alive(entry):
                _kill_group(int(entry["pid"]), signal.SIGKILL)
            done.append(f"{pid_file.parent.name}: stopped {entry['name']} (pid {entry['pid']})")
        pid_file.unlink(missing_ok=True)
        if not leftovers:
            done.append(f"{pid_file.parent.name}: nothing left running")
    return done


def _kill_group(pid: int, sig: int) -> None:
    # Each child was started in its own session (start_new_session): its group is its pid.
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)
