"""`--workers N`: a worker's copy of an arm, and the arm and worker a run's files name instead.

Worker k > 0 runs arm `A` as the instance `A@k` (its own process or container, its own proxy
listeners); worker 0's copy is `A` itself, so a one-worker run names nothing new. The backends
and the proxy see instance names; every file of the run names the study's arm, and where the
worker matters (egress.jsonl: whose copy reached out) a `worker` field beside it, so a count per
arm sums every copy exactly once and does not depend on N. rundir/control/proxy_file.py holds the
same mark (`WORKER_MARK`): an arm name cannot hold "@" (harness/study/).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeVar

WORKER_MARK = "@"
T = TypeVar("T")


def split(instance: str) -> tuple[str, int | None]:
    """(`A`, k) for `A@k`; (`A`, None) for worker 0's `A` (and for anything not an instance)."""
    arm, mark, worker = instance.partition(WORKER_MARK)
    if mark and worker.isdigit() and int(worker) > 0:
        return arm, int(worker)
    return instance, None


def join(arm: str, worker: object) -> str:
    """The instance name of worker `worker`'s copy of `arm` (worker 0 or None: `arm`)."""
    return f"{arm}{WORKER_MARK}{worker}" if isinstance(worker, int) and worker > 0 else arm


def instance_of(entry: Mapping[str, object]) -> str:
    """The instance an egress entry (`arm`, `worker`) came from."""
    return join(str(entry.get("arm")), entry.get("worker"))


def worker_of(entry: Mapping[str, object]) -> int:
    worker = entry.get("worker")
    return worker if isinstance(worker, int) else 0


def by_arm(per_instance: Mapping[str, T], combine: Callable[[T, T], T]) -> dict[str, T]:
    """A per-instance map as a per-arm one: the copies' values combined (summed for counts,
    the first worker's kept for what every copy shares), in worker order."""
    ranked = sorted(per_instance.items(), key=lambda kv: (split(kv[0])[1] or 0, kv[0]))
    out: dict[str, T] = {}
    for instance, value in ranked:
        arm = split(instance)[0]
        out[arm] = combine(out[arm], value) if arm in out else value
    return dict(sorted(out.items()))
