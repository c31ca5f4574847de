"""The one wrapper around the Docker CLI: the docker backend, `harness cleanup` and
`harness images` all run docker through it, so a missing CLI or a daemon that does not answer
reads the same everywhere.

The CLI (not the Python SDK) because it is what a user runs to inspect a run by hand; every call
is one short subprocess, so nothing holds a socket open across the orchestrator's event loop.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence

from harness.errors import HarnessError

ENSURE_HINT = "run scripts/ensure-docker (as root): it installs docker.io and starts dockerd"


class DockerError(RuntimeError):
    """A docker or iptables command failed; the message has its stderr."""


def run(
    args: Sequence[str],
    *,
    timeout: float | None = None,
    env: dict[str, str] | None = None,
    binary: str = "docker",
) -> subprocess.CompletedProcess[str]:
    """Run `docker ARGS` and return the finished process, whatever its exit code. DockerError
    when the CLI is missing or the command does not finish within `timeout` seconds."""
    try:
        return subprocess.run(
            [binary, *args], capture_output=True, text=True, timeout=timeout, env=env, check=False
        )
    except FileNotFoundError as e:
        raise DockerError("the docker command is not installed") from e
    except subprocess.TimeoutExpired as e:
        raise DockerError(f"`docker {' '.join(args[:3])} ...` did not answer in {timeout}s") from e


def docker(args: Sequence[str], timeout: float = 60, check: bool = True) -> str:
    """Run `docker ARGS` and return stdout; with `check`, DockerError naming the last line of
    its stderr when it fails."""
    proc = run(args, timeout=timeout)
    if check and proc.returncode != 0:
        detail = proc.stderr.strip().splitlines()[-1:] or ["no output"]
        raise DockerError(f"`docker {' '.join(args[:3])} ...` failed: {detail[0]}")
    return proc.stdout


def engine_answers() -> bool:
    try:
        return bool(docker(["version", "--format", "{{.Server.Version}}"], timeout=10).strip())
    except DockerError:
        return False


def require_engine() -> None:
    if not engine_answers():
        raise HarnessError(
            "--isolation docker: no Docker engine answers",
            hint="run scripts/ensure-docker (as root), or use --isolation local",
        )
