"""An arm's bounded disk (harness/isolation/docker/arm_disk.py): writes stop at its size, the run
reads its folders live, and at the end they are plain files in the run (an arm's fifo or symlink
cannot stall or redirect the copy), with no mount or image left, also after a crash."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from harness.isolation.docker.arm_disk import DISK_DIR, ArmDisk, release_all

MIB = 2**20


@pytest.fixture(autouse=True)
def _root() -> None:
    if os.geteuid() != 0:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true: the bounded disk needs root (mount, loop devices)")
        pytest.skip("needs root (mount, loop devices)")


def mounted(path: Path) -> bool:
    return str(path) in Path("/proc/mounts").read_text()


def test_writes_stop_at_the_bound_and_the_disk_says_it_is_full(tmp_path: Path) -> None:
    disk = ArmDisk(tmp_path, "a", 16 * MIB)
    disk.make()
    try:
        assert not disk.full()
        with pytest.raises(OSError) as refused, open(disk.tmp / "fill", "wb") as f:
            while True:
                f.write(b"x" * MIB)
                f.flush()
        assert refused.value.errno == errno.ENOSPC
        assert (disk.tmp / "fill").stat().st_size <= 16 * MIB
        assert disk.full()
        # The run's own paths are the disk's folders, readable from the host as they grow.
        (disk.root / "logs" / "arm.log").write_text("ready\n")
        assert (tmp_path / "logs" / "a" / "arm.log").read_text() == "ready\n"
    finally:
        disk.release()
    assert not mounted(tmp_path)
    assert not (tmp_path / DISK_DIR).exists()
    assert (tmp_path / "logs" / "a" / "arm.log").read_text() == "ready\n"  # copied out


def test_the_copy_keeps_files_and_symlinks_and_skips_a_fifo(tmp_path: Path) -> None:
    disk = ArmDisk(tmp_path, "a", 16 * MIB)
    disk.make()
    logs = tmp_path / "logs" / "a"
    (logs / "store").mkdir()
    (logs / "store" / "data.json").write_text("{}")
    (logs / "link").symlink_to("/etc/shadow")  # must stay a link, never be read through
    os.mkfifo(logs / "pipe")  # reading it would block the copy forever
    disk.release()
    assert (logs / "store" / "data.json").read_text() == "{}"
    assert (logs / "link").is_symlink() and os.readlink(logs / "link") == "/etc/shadow"
    assert not (logs / "pipe").exists()
    assert not mounted(tmp_path)


def test_a_restarted_arm_keeps_its_folders_and_gets_an_empty_tmp(tmp_path: Path) -> None:
    disk = ArmDisk(tmp_path, "a", 16 * MIB)
    disk.make()
    try:
        (disk.tmp / "scratch").write_bytes(b"x" * MIB)
        (tmp_path / "egress" / "a" / "egress.jsonl").write_text("{}\n")
        disk.make()
        assert list(disk.tmp.iterdir()) == []
        assert (tmp_path / "egress" / "a" / "egress.jsonl").read_text() == "{}\n"
    finally:
        disk.release()


def test_what_a_crashed_run_left_is_released(tmp_path: Path) -> None:
    ArmDisk(tmp_path, "a", 16 * MIB).make()  # the harness died without releasing it
    (tmp_path / "logs" / "a" / "arm.log").write_text("last words\n")
    assert release_all(tmp_path) == [f"released the disk of arm a in {tmp_path}"]
    assert not mounted(tmp_path)
    assert (tmp_path / "logs" / "a" / "arm.log").read_text() == "last words\n"
