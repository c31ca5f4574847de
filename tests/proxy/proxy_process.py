"""Start `harness proxy serve` as a real process, as an arm developer would, and talk to it."""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import time
from pathlib import Path
from typing import Any

import anthropic
import openai

from tests.child_process import ChildProcess

STARTUP_TIMEOUT = 120.0


class ProxyProcess(ChildProcess):
    stop_signal = signal.SIGINT  # as a user stops it (Ctrl-C); it flushes its call log then

    def __init__(self, run_dir: Path, *extra: str, env: dict[str, str] | None = None) -> None:
        self.run_dir = run_dir
        cmd = [
            sys.executable,
            "-m",
            "harness.cli",
            "--log-json",
            "proxy",
            "serve",
            "--port",
            "0",
            "--run-dir",
            str(run_dir),
            *extra,
        ]
        run_dir.parent.mkdir(parents=True, exist_ok=True)
        super().__init__(cmd, run_dir.parent / f"{run_dir.name}.stderr", env)
        self._clients: list[anthropic.Anthropic | openai.OpenAI] = []
        self.exports = self._read_exports()
        self.base = self.exports["ANTHROPIC_BASE_URL"].removesuffix("/anthropic")
        self.anthropic_base = self.exports["ANTHROPIC_BASE_URL"]
        self.openai_base = self.exports["OPENAI_BASE_URL"]

    def _read_exports(self) -> dict[str, str]:
        """Read the exports from the proxy's stdout with a time limit: a proxy that hangs before
        printing must fail the test, not block it. Reads the raw fd (a buffered readline would
        hide lines already read from `select`)."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        exports: dict[str, str] = {}
        pending = b""
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while "VOYAGE_API_KEY" not in exports:
            if b"\n" in pending:
                line, _, pending = pending.partition(b"\n")
                text = line.decode()
                if text.startswith("export "):
                    key, _, value = text.removeprefix("export ").strip().partition("=")
                    exports[key] = value
                continue
            if time.monotonic() > deadline:
                self.proc.kill()
                raise TimeoutError("proxy did not print its exports in time")
            ready, _, _ = select.select([fd], [], [], 1.0)
            if ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    raise RuntimeError(
                        f"proxy exited before it was ready:\n{self.stderr_path.read_text()}"
                    )
                pending += chunk
        return exports

    def anthropic(self, **kwargs: Any) -> anthropic.Anthropic:
        """A sync Anthropic SDK client pointed at the proxy (closed by `stop`)."""
        client = anthropic.Anthropic(
            base_url=self.anthropic_base, api_key="placeholder", max_retries=0, **kwargs
        )
        self._clients.append(client)
        return client

    def openai(self, **kwargs: Any) -> openai.OpenAI:
        client = openai.OpenAI(
            base_url=self.openai_base, api_key="placeholder", max_retries=0, **kwargs
        )
        self._clients.append(client)
        return client

    def async_anthropic(self, **kwargs: Any) -> anthropic.AsyncAnthropic:
        """Use as `async with proxy.async_anthropic() as client:` so it closes its sockets."""
        return anthropic.AsyncAnthropic(
            base_url=self.anthropic_base, api_key="placeholder", max_retries=0, **kwargs
        )

    def async_openai(self, **kwargs: Any) -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(
            base_url=self.openai_base, api_key="placeholder", max_retries=0, **kwargs
        )

    def calls(self, at_least: int = 0, timeout: float = 10.0) -> list[dict[str, Any]]:
        """The call log so far; waits until it has `at_least` lines (streamed calls are logged
        when the stream ends, which can be just after the client has read it)."""
        path = self.run_dir / "calls.jsonl"
        deadline = time.monotonic() + timeout
        while True:
            lines = path.read_text().splitlines() if path.exists() else []
            if len(lines) >= at_least or time.monotonic() > deadline:
                return [json.loads(line) for line in lines]
            time.sleep(0.02)

    def call_where(self, timeout: float = 10.0, **fields: Any) -> dict[str, Any]:
        """The first logged call whose fields equal `fields`, waiting for it to be logged.

        Counting lines before a call is racy: the previous test's streamed call can be logged
        just after its client finished reading, and would be taken for this test's call."""
        deadline = time.monotonic() + timeout
        while True:
            for call in self.calls():
                if all(call.get(key) == value for key, value in fields.items()):
                    return call
            if time.monotonic() > deadline:
                raise AssertionError(f"no call with {fields} in {self.run_dir / 'calls.jsonl'}")
            time.sleep(0.02)

    def stop(self) -> int:
        for client in self._clients:
            client.close()
        return super().stop()
