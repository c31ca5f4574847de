"""The local backend's bounds for an arm process: a memory cgroup and POSIX rlimits, set in the
child before it runs the arm, and what they cannot enforce (recorded in run.json's `arm_limits`,
`not_enforced`).

- memory: a cgroup of the arm's own with a memory limit, where the harness can make one
  (memory_cgroup.py: the arm and its children together, no swap); else not enforced. Not an
  rlimit: RLIMIT_AS and RLIMIT_DATA count reserved address space, and engines reserve far more
  than they touch (Kuzu, Graphiti's store, 8 TiB up front; V8 a 4 GiB cage), so an rlimit that
  bounds anything stops them from starting.
- pids: RLIMIT_NPROC counts every process and thread of the user, not of the arm, and root is
  exempt. For a user other than root it is set to the user's tasks at the arm's start plus the
  study's `pids`; as root it is not enforced.
- disk: RLIMIT_FSIZE bounds each file the arm writes (its log included), not their sum.
- cpus: not enforced (that needs a cgroup the harness may not own; the docker backend has one).

Of the bounds met, only memory is seen (the cgroup's OOM kills: LocalBackend.limit_hits); an
rlimit met is the arm's own error. The docker backend is the one whose bounds a study's
fairness claims rest on.
"""

from __future__ import annotations

import contextlib
import os
import resource
from collections.abc import Callable
from pathlib import Path

from rundir.runs import AppliedLimits, ResourceLimits

HOW = "rlimits: RLIMIT_NPROC (per user), RLIMIT_FSIZE (per file)"


def _user_tasks(uid: int) -> int:
    """Processes and threads of `uid` now (what RLIMIT_NPROC counts)."""
    count = 0
    for status in Path("/proc").glob("[0-9]*/status"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = dict(
                line.split(":", 1) for line in status.read_text().splitlines() if ":" in line
            )
            if int(fields["Uid"].split()[0]) == uid:
                count += int(fields["Threads"])
    return count


def preexec(limits: ResourceLimits, memory_procs: str | None = None) -> Callable[[], None]:
    """The function Popen runs in the child before the arm: it joins its memory cgroup
    (`memory_procs`, that cgroup's cgroup.procs, memory_cgroup.py), then the rlimits (computed
    here, in the parent, so the child only makes system calls)."""
    uid = os.geteuid()
    nproc = None if uid == 0 else _user_tasks(uid) + limits.pids
    settings = [(resource.RLIMIT_FSIZE, limits.disk)]
    if nproc is not None:
        settings.append((resource.RLIMIT_NPROC, nproc))

    def apply() -> None:
        if memory_procs is not None:
            with open(memory_procs, "w") as f:
                f.write("0")
        for which, value in settings:
            _, hard = resource.getrlimit(which)
            soft = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(which, (soft, soft))

    return apply


def applied(limits: ResourceLimits, memory_how: str = "", swap: bool = False) -> AppliedLimits:
    """What the local backend holds every arm to (the same for each): `memory_how` says how the
    memory bound is held (memory_cgroup.py), empty where it is not."""
    root = os.geteuid() == 0
    not_enforced = ["cpus", "disk beyond one file"]
    not_enforced += [] if memory_how else ["memory (no cgroup with the memory controller)"]
    not_enforced += [] if swap else ["swap"]
    not_enforced += ["pids (root is exempt)"] if root else []
    return AppliedLimits(
        pids=None if root else limits.pids,
        memory=limits.memory if memory_how else None,
        memory_swap=limits.memory if memory_how and swap else None,
        disk=limits.disk,
        how=f"{memory_how}; {HOW}" if memory_how else HOW,
        not_enforced=not_enforced,
    )
