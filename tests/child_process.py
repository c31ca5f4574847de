"""A server a test starts as a real process and must stop: stdout piped (where it prints that it
is ready), stderr to a file that outlives it, for the failure message."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path


class ChildProcess:
    # The signal a clean shutdown starts with; after 15 s the child is killed.
    stop_signal = signal.SIGTERM

    def __init__(
        self,
        cmd: list[str],
        stderr_path: Path,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
    ) -> None:
        self.stderr_path = stderr_path
        self._stderr = open(stderr_path, "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env={**os.environ, **(env or {})},
            cwd=cwd,
        )

    def log(self) -> str:
        return self.stderr_path.read_text()

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(self.stop_signal)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._stderr.close()
        if self.proc.stdout:
            self.proc.stdout.close()
        return self.proc.returncode
