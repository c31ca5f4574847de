"""The docker backend's bounds for an arm container, and how it learns that an arm met one.

Applied at `docker run` (HostConfig): `--pids-limit` (PidsLimit), `--memory` and `--memory-swap`
equal to it (Memory, MemorySwap: no swap), `--cpus` (NanoCpus), `--read-only` (the image's
files; every writable place is on the arm's bounded disk, arm_disk.py), `--shm-size` (the
/dev/shm tmpfs, charged to the memory bound) and no container log (`--log-driver none`: the arm's
output already goes to its log file on its disk, and a json-file log would grow on the host).

Read back with `docker inspect` for run.json (`arm_limits`), so what is recorded is what the
engine holds, not what was asked.

Met, seen from the host and never from anything the arm says:
- memory: the OOM killer ran in the arm's cgroup (`oom_kill` in memory.events on cgroup v2,
  memory.oom_control on v1), or the engine says the container was OOM-killed
  (State.OOMKilled: the arm's main process died, and its cgroup with it);
- pids: a fork or clone was refused at the bound (`max` in pids.events, both versions);
- disk: its disk has less than arm_disk.FULL_BELOW left, or no inode.
Counters are read through the container's main process (/proc/PID/cgroup names its cgroup), and
compared with the last look, so each crossing is reported once.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from harness.isolation.docker.arm_disk import ArmDisk, DiskError
from harness.isolation.docker.cli import DockerError, docker
from rundir.runs import AppliedLimits, ResourceLimits

CGROUP_ROOT = Path("/sys/fs/cgroup")
SHM_MAX = 64 * 1024 * 1024  # docker's default /dev/shm; never above the memory bound


def run_flags(limits: ResourceLimits) -> list[str]:
    """`docker run` flags bounding one arm container."""
    return [
        "--pids-limit", str(limits.pids),
        "--memory", str(limits.memory),
        "--memory-swap", str(limits.memory),
        "--cpus", f"{limits.cpus:g}",
        "--shm-size", str(min(SHM_MAX, limits.memory // 4)),
        "--read-only",
        "--log-driver", "none",
    ]  # fmt: skip


def applied(container: str, disk: int) -> AppliedLimits:
    """What the engine holds for `container` (docker inspect), and the disk's size."""
    out = docker(["inspect", "-f", "{{json .HostConfig}}", container])
    host = json.loads(out)
    nano = host.get("NanoCpus") or 0
    return AppliedLimits(
        pids=host.get("PidsLimit") or None,
        memory=host.get("Memory") or None,
        memory_swap=host.get("MemorySwap") or None,
        cpus=nano / 1e9 if nano else None,
        disk=disk,
        read_only_root=bool(host.get("ReadonlyRootfs")),
        how="docker HostConfig; disk: an ext4 loop image for logs, egress and /tmp",
    )


def _cgroup_dirs(pid: int) -> dict[str, Path]:
    """controller -> the cgroup folder of process `pid` ("" for the v2 unified hierarchy)."""
    dirs: dict[str, Path] = {}
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for controller in controllers.split(",") if controllers else [""]:
                base = CGROUP_ROOT / controller if controller else CGROUP_ROOT
                if not controller and not (CGROUP_ROOT / "cgroup.controllers").exists():
                    continue  # v1 hosts list an empty v2 hierarchy too; nothing is counted there
                dirs[controller] = base / path.lstrip("/")
    return dirs


def _counter(path: Path, key: str) -> int:
    """`key N` from a cgroup `*.events` or `memory.oom_control` file (0 if unreadable)."""
    with contextlib.suppress(OSError, ValueError):
        for line in path.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    return 0


def counters(pid: int) -> dict[str, int]:
    """{"pids": refused forks, "memory": OOM kills} of the cgroup(s) of `pid`."""
    dirs = _cgroup_dirs(pid)
    found = {"pids": 0, "memory": 0}
    if "" in dirs:  # cgroup v2
        found["pids"] = _counter(dirs[""] / "pids.events", "max")
        found["memory"] = _counter(dirs[""] / "memory.events", "oom_kill")
    if "pids" in dirs:
        found["pids"] = _counter(dirs["pids"] / "pids.events", "max")
    if "memory" in dirs:
        found["memory"] = _counter(dirs["memory"] / "memory.oom_control", "oom_kill")
    return found


@dataclass
class LimitWatch:
    """Per container: the counters at the last look, so a crossing is reported once."""

    seen: dict[str, dict[str, int]] = field(default_factory=dict)
    oom_seen: set[str] = field(default_factory=set)  # container ids whose OOM kill was reported

    def started(self, container: str) -> None:
        """A container (re)started: its counters begin at what they are now."""
        state = _state(container)
        if state is not None:
            self.seen[container] = counters(state[0]) if state[0] else {}

    def hits(self, container: str) -> list[str]:
        """The bounds `container` met since the last look: "memory", "pids"."""
        state = _state(container)
        if state is None:
            return []
        pid, oom_killed, container_id = state
        met: list[str] = []
        if pid:
            now = counters(pid)
            before = self.seen.get(container, {})
            met = [name for name, value in now.items() if value > before.get(name, 0)]
            self.seen[container] = now
        if oom_killed and container_id not in self.oom_seen:
            self.oom_seen.add(container_id)
            if "memory" not in met:
                met.append("memory")
        return sorted(met)


def _state(container: str) -> tuple[int, bool, str] | None:
    """(main process pid or 0, OOM-killed, id) of `container`, or None if it is gone."""
    try:
        out = docker(
            ["inspect", "-f", "{{.State.Pid}} {{.State.OOMKilled}} {{.Id}}", container],
            timeout=30,
        )
    except DockerError:
        return None
    pid, oom, container_id = out.split()
    return int(pid), oom == "true", container_id


class ArmBounds:
    """The docker backend's bounds of its arms: each arm's disk, what the engine holds for each
    container, and which bounds each arm met since the last look."""

    def __init__(self, run_dir: Path, limits: ResourceLimits) -> None:
        self.run_dir = run_dir
        self.limits = limits
        self.disks: dict[str, ArmDisk] = {}
        self.held: dict[str, AppliedLimits] = {}
        self.watch = LimitWatch()
        self.full: set[str] = set()  # arms whose disk was full at the last look

    def disk(self, arm: str) -> ArmDisk:
        """The arm's disk, made and mounted (a restart keeps it and what it wrote)."""
        disk = self.disks.setdefault(arm, ArmDisk(self.run_dir, arm, self.limits.disk))
        try:
            disk.make()
        except DiskError as e:
            raise DockerError(f"its bounded disk: {e}") from e
        return disk

    def started(self, arm: str, container: str) -> None:
        self.watch.started(container)
        self.held[arm] = applied(container, self.disks[arm].size)

    def hits(self, arm: str, container: str) -> list[str]:
        met = self.watch.hits(container)
        disk = self.disks.get(arm)
        if disk is not None and disk.full():
            if arm not in self.full:  # once per filling, not on every later look
                self.full.add(arm)
                met.append("disk")
        else:
            self.full.discard(arm)
        return met

    def release(self) -> list[str]:
        """Every arm's disk copied out and unmounted; the arms whose disk could not be."""
        failed = []
        for disk in self.disks.values():
            try:
                disk.release()
            except DiskError as e:
                failed.append(f"{disk.arm}: {e}")
        return failed
