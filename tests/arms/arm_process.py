"""Start an arm as a real process (`python -m <module> --port 0`) and wait for its ready line."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from arms.server import parse_ready_line
from tests.child_process import ChildProcess

STARTUP_TIMEOUT = 30.0


class ArmProcess(ChildProcess):
    def __init__(self, module: str, log_dir: Path, env: dict[str, str] | None = None) -> None:
        super().__init__(
            [sys.executable, "-m", module, "--host", "127.0.0.1", "--port", "0"],
            log_dir / f"{module}.{time.monotonic_ns()}.stderr",
            env,
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
