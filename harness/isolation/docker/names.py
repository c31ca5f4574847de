"""The docker names of a worker's copy of an arm (`--workers N`: `A@k`, rundir/instances.py).

Docker refuses "@" in container and network names ([a-zA-Z0-9][a-zA-Z0-9_.-]*) and in host
names, so worker k's copy of arm `A` is `<prefix>-A-w<k>` there (worker 0's copy keeps `A`, so a
one-worker run's names are unchanged). Arm names may hold "-" too, so a study whose arm names
would meet a copy's (`A-w1` beside `A` with two workers), or the proxy's own (`ctl`, `proxy`),
is refused before anything starts. The arm's container is given the study's arm name as its
host name: each copy sees itself as the one arm, so nothing it sends depends on N.
"""

from __future__ import annotations

from collections.abc import Iterable

from harness.isolation.base import InfraError
from rundir.instances import split

RESERVED = ("ctl", "proxy")  # the proxy's network and container
# Each listener of the proxy takes a port from its range (backend.py: 8100+i, 8200+i).
MAX_INSTANCES = 100


def docker_name(instance: str) -> str:
    """The suffix of `instance`'s container and network names."""
    arm, worker = split(instance)
    return arm if worker is None else f"{arm}-w{worker}"


def host_name(instance: str) -> str:
    """The host name the container of `instance` has: its arm's."""
    return split(instance)[0]


def check_names(instances: Iterable[str]) -> None:
    """Refuse a set of instances whose docker names collide, in one line."""
    seen: dict[str, str] = {}
    listed = list(instances)
    if len(listed) > MAX_INSTANCES:
        raise InfraError(
            f"docker: {len(listed)} arm copies (arms x workers) are more than the proxy's "
            f"{MAX_INSTANCES} listener ports; use fewer workers"
        )
    for instance in listed:
        name = docker_name(instance)
        if name in RESERVED:
            raise InfraError(f"docker: rename arm {split(instance)[0]!r} (reserved name)")
        if name in seen:
            raise InfraError(
                f"docker: arm copies {seen[name]!r} and {instance!r} would both be named "
                f"{name!r}; rename the arm"
            )
        seen[name] = instance
