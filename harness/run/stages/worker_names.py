"""`--workers N`: the count checked, and the names of each worker's arm instances.

Apart from harness/run/stages/workers.py (which drives the workers) so the preparing stage can check
and name them without importing the orchestrator.
"""

from __future__ import annotations

from harness.errors import HarnessError
from rundir.control import instance_name


def check_workers(workers: int) -> None:
    """One clear line for a worker count that cannot run. Every backend and kind of study runs
    with workers: local and docker arms are copied per worker (`A@k`), and a memory study's
    histories each go to one worker (harness/run/stages/workers.py)."""
    if workers < 1:
        raise HarnessError(
            f"--workers must be 1 or more, not {workers}",
            hint="--workers 1 runs the items one at a time; more run that many at once",
        )


def instances(arms: list[str], workers: int) -> list[str]:
    """Every worker's copy of every arm: the proxy's listeners."""
    return [instance_name(arm, worker) for worker in range(workers) for arm in arms]
