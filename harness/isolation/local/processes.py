"""The local backend's child processes: started in a process group of their own with their output
in a log file, awaited until their log says they are ready, and stopped by signal, then SIGKILL."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from harness.isolation import pids
from harness.isolation.base import InfraError

STARTUP_TIMEOUT_S = 60.0


def spawn(
    pid_file: pids.PidFile,
    name: str,
    command: list[str],
    env: dict[str, str],
    log_path: Path,
    cwd: Path | None = None,
    bounds: Callable[[], None] | None = None,
) -> subprocess.Popen[bytes]:
    """`command` started with its output appended to `log_path`, named in pids.json (so
    `harness cleanup` finds it if the harness dies)."""
    with open(log_path, "ab") as log:
        try:
            process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=cwd,
                # Own process group: Ctrl-C in the terminal reaches the harness only, which
                # then stops children in order (arms first, proxy last to flush its log).
                start_new_session=True,
                preexec_fn=bounds,
            )
        except OSError as e:
            raise InfraError(f"cannot start {name}: {' '.join(command)}: {e}") from e
    pid_file.add(name, process.pid, command)
    return process


async def wait_for_line(
    process: subprocess.Popen[bytes],
    log_path: Path,
    offset: int,
    ready: Callable[[str], bool],
    name: str,
) -> str:
    """The first line of `log_path` after `offset` that `ready` accepts; InfraError if the
    process exits first or STARTUP_TIMEOUT_S passes (it is then stopped)."""
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        with open(log_path, "rb") as f:
            f.seek(offset)
            for raw in f.read().decode(errors="replace").splitlines():
                if ready(raw.strip()):
                    return raw.strip()
        if process.poll() is not None:
            raise InfraError(
                f"{name} exited with code {process.returncode} before it was ready; "
                f"its log ({log_path}):\n{tail(log_path, offset)}"
            )
        await asyncio.sleep(0.05)
    terminate(process, 5.0)
    raise InfraError(f"{name} was not ready after {STARTUP_TIMEOUT_S:.0f} s; see {log_path}")


def signal_group(process: subprocess.Popen[bytes], sig: int) -> None:
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)


def terminate(process: subprocess.Popen[bytes], timeout: float, sig: int = signal.SIGTERM) -> None:
    signal_group(process, sig)
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        signal_group(process, signal.SIGKILL)
        process.wait()


def tail(path: Path, offset: int, lines: int = 30) -> str:
    with open(path, "rb") as f:
        f.seek(offset)
        return "\n".join(f.read().decode(errors="replace").splitlines()[-lines:])
