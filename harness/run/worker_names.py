"""`--workers N`: what it can run on, and the names of each worker's arm instances.

Apart from harness/run/workers.py (which drives the workers) so the preparing stage can check
and name them without importing the orchestrator.
"""

from __future__ import annotations

from harness.errors import HarnessError
from rundir.proxy_file import instance_name


def check_workers(workers: int, isolation: str, has_memory: bool) -> None:
    """One clear line for what --workers cannot do (yet)."""
    if workers < 1:
        raise HarnessError(f"--workers must be 1 or more, not {workers}")
    if workers == 1:
        return
    if isolation == "docker":
        raise HarnessError(
            "--workers > 1 runs on the local backend only (docker names one container and "
            "network per arm); use --isolation local or --workers 1"
        )
    if has_memory:
        raise HarnessError(
            "--workers > 1 cannot run a memory study (an arm's memory folder is per arm); "
            "use --workers 1"
        )


def instances(arms: list[str], workers: int) -> list[str]:
    """Every worker's copy of every arm: the proxy's listeners."""
    return [instance_name(arm, worker) for worker in range(workers) for arm in arms]
