"""The local backend's memory bound for an arm: a cgroup of its own with a memory limit, where
the harness can make one (as it makes the proxy's, proxy_rule.py), the arm's process moved into
it before it execs, so the arm and every child it starts share one bound, with no swap.

Why not RLIMIT_DATA: it counts reserved address space, not memory. Kuzu (Graphiti's store)
reserves 8 TiB up front ("Mmap for size 8796093022208 failed"), V8 a 4 GiB pointer cage, glibc
64 MiB per malloc arena, none of it touched: an rlimit small enough to bound an arm stops such
engines from starting. A cgroup counts the pages the arm touches.

Where: a cgroup2 hierarchy with the memory controller (`memory.max`, `memory.swap.max = 0`),
under its root (the one cgroup that may hold processes and delegate controllers at once); else a
cgroup v1 memory hierarchy (`memory.limit_in_bytes`, `memory.memsw.limit_in_bytes` where the
kernel accounts swap), under the harness's own cgroup there. Neither (not root, no memory
controller): the memory bound is not enforced, and run.json's `arm_limits` says so.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

from harness.isolation import firewall


@dataclass(frozen=True)
class Hierarchy:
    parent: Path  # where the arms' cgroups are made
    version: int  # 1 or 2


def _mounts() -> list[tuple[str, str, str]]:
    """(mount point, type, options) of every cgroup mount."""
    found = []
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mounts").read_text().splitlines():
            fields = line.split()
            if len(fields) > 3 and fields[2] in ("cgroup", "cgroup2"):
                found.append((fields[1], fields[2], fields[3]))
    return found


def _own_path(version: int) -> str:
    """The harness's own cgroup in the v1 memory hierarchy (or v2's), from /proc/self/cgroup."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            if (version == 2 and controllers == "") or "memory" in controllers.split(","):
                return path.lstrip("/")
    return ""


def find() -> tuple[Hierarchy | None, str]:
    """Where an arm's memory cgroup can be made, or None and why not."""
    if os.geteuid() != 0:
        return None, "the local backend is not running as root"
    for point, kind, _options in _mounts():
        if kind == "cgroup2":
            root = Path(point)
            with contextlib.suppress(OSError):
                if "memory" in (root / "cgroup.controllers").read_text().split():
                    return Hierarchy(root, 2), ""
    for point, kind, options in _mounts():
        if kind == "cgroup" and "memory" in options.split(","):
            parent = Path(point) / _own_path(1)
            if (parent / "memory.limit_in_bytes").exists():
                return Hierarchy(parent, 1), ""
    return None, "no cgroup hierarchy with the memory controller"


class MemoryCgroups:
    """One run's arm cgroups: made before each arm starts, removed once it has exited."""

    def __init__(self, run_id: str) -> None:
        self.hierarchy, self.why = find()
        self.prefix = f"harness-{firewall.run_tag(run_id)}-arm-{os.getpid()}-"
        self.made: dict[str, Path] = {}  # instance -> its cgroup
        self.kills_seen: dict[str, int] = {}  # instance -> OOM kills already reported

    @property
    def how(self) -> str:
        if self.hierarchy is None:
            return ""
        if self.hierarchy.version == 2:
            return "a cgroup's memory.max, memory.swap.max = 0 (memory, the arm and its children)"
        return "a cgroup's memory.limit_in_bytes and memsw (memory, the arm and its children)"

    def make(self, instance: str, memory: int) -> str | None:
        """The `cgroup.procs` an arm's child writes itself into (the limit set), or None where
        none can be made (self.why). A failure to set the limit is an OSError: fail closed."""
        if self.hierarchy is None:
            return None
        path = self.made.get(instance) or self.hierarchy.parent / f"{self.prefix}{len(self.made)}"
        path.mkdir(exist_ok=True)
        self.made[instance] = path
        if self.hierarchy.version == 2:
            (path / "memory.max").write_text(str(memory))
            swap = path / "memory.swap.max"
            if swap.exists():
                swap.write_text("0")
        else:
            (path / "memory.limit_in_bytes").write_text(str(memory))
            memsw = path / "memory.memsw.limit_in_bytes"
            if memsw.exists():  # the kernel accounts swap: none beyond the memory bound
                memsw.write_text(str(memory))
        return str(path / "cgroup.procs")

    def swap_bounded(self) -> bool:
        if self.hierarchy is None:
            return False
        name = "memory.swap.max" if self.hierarchy.version == 2 else "memory.memsw.limit_in_bytes"
        return (self.hierarchy.parent / name).exists() or any(
            (p / name).exists() for p in self.made.values()
        )

    def met(self, instance: str) -> bool:
        """Whether the kernel killed a process of the arm's cgroup for memory since the last
        look (each kill once): the bound was met, seen by the host, never said by the arm."""
        kills = self._oom_kills(instance)
        met = kills > self.kills_seen.get(instance, 0)
        self.kills_seen[instance] = kills
        return met

    def _oom_kills(self, instance: str) -> int:
        path = self.made.get(instance)
        if path is None or self.hierarchy is None:
            return 0
        name = "memory.events" if self.hierarchy.version == 2 else "memory.oom_control"
        with contextlib.suppress(OSError, ValueError):
            fields = dict(line.split() for line in (path / name).read_text().splitlines())
            return int(fields.get("oom_kill", "0"))
        return 0

    def remove(self, instance: str) -> None:
        path = self.made.pop(instance, None)
        self.kills_seen.pop(instance, None)
        if path is not None:
            with contextlib.suppress(OSError):
                path.rmdir()  # refused while a process is still in it (cleanup takes it later)

    def remove_all(self) -> None:
        for instance in list(self.made):
            self.remove(instance)


def remove_stale(tags: set[str]) -> list[str]:
    """`harness cleanup`: the arm cgroups of the given runs' tags that hold no process."""
    hierarchy, _ = find()
    done: list[str] = []
    if hierarchy is None:
        return done
    for path in sorted(hierarchy.parent.glob("harness-*-arm-*")):
        if path.name.split("-")[1] in tags:
            with contextlib.suppress(OSError):
                path.rmdir()
                done.append(f"removed the arm cgroup {path.name}")
    return done
