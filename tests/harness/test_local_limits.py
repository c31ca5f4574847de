"""The local backend's bounds are real rlimits on the arm's process (harness/isolation/
local/limits.py): memory past the bound is refused, a file past the disk bound is refused, and
what rlimits cannot bound is said."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from harness.isolation.local.limits import applied, preexec
from rundir.limits import MIB, ResourceLimits

LIMITS = ResourceLimits(pids=64, memory=256 * MIB, cpus=1, disk=16 * MIB)


def run_bounded(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        preexec_fn=preexec(LIMITS),
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=60,
    )


def test_memory_past_the_bound_is_refused(tmp_path: Path) -> None:
    done = run_bounded(
        "kept = []\n"
        "try:\n"
        "    while True: kept.append(bytearray(16 * 2**20))\n"
        "except MemoryError: print('refused at', len(kept) * 16, 'MiB')\n",
        tmp_path,
    )
    assert done.stdout.startswith("refused at"), done.stdout + done.stderr
    assert int(done.stdout.split()[2]) <= 256


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


def test_what_rlimits_cannot_bound_is_said() -> None:
    held = applied(LIMITS)
    assert (held.memory, held.disk, held.cpus, held.memory_swap) == (
        256 * MIB,
        16 * MIB,
        None,
        None,
    )
    assert "cpus" in held.not_enforced and "swap" in held.not_enforced
    assert ("pids (root is exempt)" in held.not_enforced) == (os.geteuid() == 0)
    assert held.pids == (None if os.geteuid() == 0 else 64)
