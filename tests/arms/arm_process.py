"""Start an arm as a real process (`python -m <module> --port 0`) and wait for its ready line."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from arms.server import parse_ready_line

STARTUP_TIMEOUT = 30.0


class ArmProcess:
    def __init__(self, module: str, log_dir: Path, env: dict[str, str] | None = None) -> None:
        self.stderr_path = log_dir / f"{module}.{time.monotonic_ns()}.stderr"
        self._stderr = open(self.stderr_path, "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", module, "--host", "127.0.0.1", "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env={**os.environ, **(env or {})},
            cwd=Path(__file__).resolve().parents[2],
        )
        self.url = self._wait_ready()

    def _wait_ready(self) -> str:
        assert self.proc.stdout is not None
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline().decode()
            if not line:
                break
            url = parse_ready_line(line.strip())
            if url:
                return url
        self.stop()
        raise RuntimeError(f"arm did not get ready:\n{self.stderr_path.read_text()}")

    def log(self) -> str:
        return self.stderr_path.read_text()

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._stderr.close()
        if self.proc.stdout:
            self.proc.stdout.close()
        return self.proc.returncode
