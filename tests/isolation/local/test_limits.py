"""The local backend's bounds are real on the arm's process (harness/isolation/local/limits.py,
memory_cgroup.py): memory past the bound stops the arm (its cgroup's limit, the arm and its
children together) and the host sees it met, while address space reserved and never touched
(Kuzu's 8 TiB) does not; a file past the disk bound is refused; and what is not bounded is
said."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.isolation.local.limits import applied, preexec
from harness.isolation.local.memory_cgroup import MemoryCgroups, find
from rundir.runs.limits import MIB, ResourceLimits

LIMITS = ResourceLimits(pids=64, memory=256 * MIB, cpus=1, disk=16 * MIB)
NEEDS_CGROUP = pytest.mark.skipif(find()[0] is None, reason=find()[1] or "no memory cgroup")


def run_bounded(
    code: str, cwd: Path, memory: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        preexec_fn=preexec(LIMITS, memory),
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )


@NEEDS_CGROUP
def test_memory_past_the_bound_stops_the_arm_and_its_children(tmp_path: Path) -> None:
    # The memory is a child's: an rlimit is per process, the cgroup holds the arm's tree.
    cgroups = MemoryCgroups(f"limits-{tmp_path.name}")
    try:
        done = run_bounded(
            "import subprocess, sys\n"
            "child = 'kept = []\\nwhile True:\\n kept.append(bytearray(16 * 2**20))\\n"
            " print(len(kept) * 16, flush=True)'\n"
            "done = subprocess.run([sys.executable, '-c', child], capture_output=True, text=True)\n"
            "print(done.returncode, done.stdout.split()[-1:])\n",
            tmp_path,
            cgroups.make("arm", LIMITS.memory),
        )
        # The host sees the bound met (the turn's outcome is then resource_limit), once.
        met = [cgroups.met("arm"), cgroups.met("arm")]
    finally:
        cgroups.remove_all()
    assert met == [True, False]
    code, reached = done.stdout.split(" ", 1)
    assert code == "-9", done.stdout + done.stderr  # the kernel's OOM killer, in the cgroup
    assert 0 < int(reached.strip("[]'\n")) <= 256


@NEEDS_CGROUP
def test_address_space_reserved_up_front_is_not_memory(tmp_path: Path) -> None:
    # As Kuzu (Graphiti's store) does at start: 8 TiB reserved, none of it touched. Under the
    # RLIMIT_DATA this backend used to set, this failed ("Mmap for size 8796093022208 failed").
    cgroups = MemoryCgroups(f"limits-{tmp_path.name}")
    try:
        done = run_bounded(
            "import mmap\n"
            "m = mmap.mmap(-1, 8 * 2**40, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS"
            " | mmap.MAP_NORESERVE)\n"
            "m[0:4] = b'kuzu'\n"
            "print('reserved', len(m))\n",
            tmp_path,
            cgroups.make("arm", LIMITS.memory),
        )
    finally:
        cgroups.remove_all()
    assert done.stdout.strip() == f"reserved {8 * 2**40}", done.stdout + done.stderr


def test_a_file_past_the_disk_bound_is_refused(tmp_path: Path) -> None:
    done = run_bounded(
        "import errno\n"
        "f = open('big', 'wb', buffering=0)\n"
        "try:\n"
        "    while True: f.write(b'x' * 2**20)\n"
        "except OSError as e: print(errno.errorcode[e.errno])\n",
        tmp_path,
    )
    assert done.stdout.strip() == "EFBIG", done.stdout + done.stderr
    assert (tmp_path / "big").stat().st_size <= 16 * MIB


def test_what_is_not_bounded_is_said() -> None:
    held = applied(LIMITS)  # no memory cgroup: memory is not bounded, and says so
    assert (held.memory, held.disk, held.cpus, held.memory_swap) == (None, 16 * MIB, None, None)
    assert "cpus" in held.not_enforced and "swap" in held.not_enforced
    assert "memory (no cgroup with the memory controller)" in held.not_enforced
    by_cgroup = applied(LIMITS, "a cgroup's memory.max", swap=True)
    assert (by_cgroup.memory, by_cgroup.memory_swap) == (256 * MIB, 256 * MIB)
    assert not any(x.startswith(("memory", "swap")) for x in by_cgroup.not_enforced)
    assert ("pids (root is exempt)" in held.not_enforced) == (os.geteuid() == 0)
    assert held.pids == (None if os.geteuid() == 0 else 64)
