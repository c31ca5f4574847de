"""Stopping one arm so its state folder can be copied (seam v2 snapshots), by backend.

The backend contract (harness/isolation/base.py) can start, restart and stop all arms; a
snapshot needs one arm stopped cleanly (SIGTERM: its engine flushes and closes its files) before
its folder is copied, and then restarted on the copy with `restart_arm`. A backend with a
`stop_arm` method of its own is used as is.
"""

from __future__ import annotations

import asyncio
import subprocess
from typing import Any

from harness.isolation import InfraError, IsolationBackend
from harness.isolation.docker import cli as docker_cli

STOP_TIMEOUT_S = 20.0


async def stop_arm(backend: IsolationBackend, name: str) -> None:
    own = getattr(backend, "stop_arm", None)
    if callable(own):
        await own(name)
        return
    if backend.isolation == "local":
        await _stop_local(backend, name)
    elif backend.isolation == "docker":
        await asyncio.to_thread(_stop_container, backend.arm_container(name))  # type: ignore[attr-defined]
    else:
        raise InfraError(f"the {backend.isolation} backend cannot stop one arm for a snapshot")


async def _stop_local(backend: Any, name: str) -> None:
    process = backend.arms.pop(name, None)
    if process is None:
        return
    process.terminate()
    try:
        await asyncio.to_thread(process.wait, STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        await asyncio.to_thread(process.wait, 5)


def _stop_container(container: str) -> None:
    try:
        done = docker_cli.run(["stop", "-t", str(int(STOP_TIMEOUT_S)), container])
    except docker_cli.DockerError as e:
        raise InfraError(f"docker stop {container} failed: {e}") from e
    if done.returncode != 0:
        raise InfraError(f"docker stop {container} failed: {done.stderr.strip()[:300]}")
