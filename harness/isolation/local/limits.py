"""The local backend's bounds for an arm process: POSIX rlimits, set in the child before it runs
the arm, and what they cannot enforce (recorded in run.json's `arm_limits`, `not_enforced`).

- memory: RLIMIT_DATA (the process's private writable memory: heap and anonymous mappings), not
  RLIMIT_AS. Address space is not memory: V8 (the Node arms) reserves a 4 GiB pointer cage and
  glibc 64 MiB per malloc arena up front, none of it touched, so an RLIMIT_AS of a few GiB stops
  healthy arms from starting. RLIMIT_DATA counts what can be written. It is per process: an
  arm's children each get their own. No swap bound.
- pids: RLIMIT_NPROC counts every process and thread of the user, not of the arm, and root is
  exempt. For a user other than root it is set to the user's tasks at the arm's start plus the
  study's `pids`; as root it is not enforced.
- disk: RLIMIT_FSIZE bounds each file the arm writes (its log included), not their sum.
- cpus: not enforced (that needs a cgroup the harness may not own; the docker backend has one).

Nothing here tells the harness that an arm met a bound (a refused allocation is the arm's own
MemoryError): `limit_hits` stays empty on the local backend, and the docker backend is the one
whose bounds a study's fairness claims rest on.
"""

from __future__ import annotations

import contextlib
import os
import resource
from collections.abc import Callable
from pathlib import Path

from rundir.limits import AppliedLimits, ResourceLimits

HOW = "rlimits: RLIMIT_DATA (memory), RLIMIT_NPROC (per user), RLIMIT_FSIZE (per file)"


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


def preexec(limits: ResourceLimits) -> Callable[[], None]:
    """The function Popen runs in the child before the arm: the rlimits (computed here, in the
    parent, so the child only makes system calls)."""
    uid = os.geteuid()
    nproc = None if uid == 0 else _user_tasks(uid) + limits.pids
    settings = [
        (resource.RLIMIT_DATA, limits.memory),
        (resource.RLIMIT_FSIZE, limits.disk),
    ]
    if nproc is not None:
        settings.append((resource.RLIMIT_NPROC, nproc))

    def apply() -> None:
        for which, value in settings:
            _, hard = resource.getrlimit(which)
            soft = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(which, (soft, soft))

    return apply


def applied(limits: ResourceLimits) -> AppliedLimits:
    """What the local backend holds every arm to (the same for each)."""
    root = os.geteuid() == 0
    not_enforced = ["cpus", "swap", "disk beyond one file", "memory of the arm's children"]
    not_enforced += ["pids (root is exempt)"] if root else []
    return AppliedLimits(
        pids=None if root else limits.pids,
        memory=limits.memory,
        disk=limits.disk,
        how=HOW,
        not_enforced=not_enforced,
    )
