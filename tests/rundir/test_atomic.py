"""rundir/atomic.py: a replaced file is whole or absent, never half; its mode is the one asked;
no temporary file outlives a write, even one killed mid-way."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rundir.atomic import write_atomic

# A writer of large files in a loop, each all one byte: a torn file would show two bytes or a
# short length. It prints "go" once it has started its first write.
WRITER = """
import sys
from pathlib import Path
from rundir.atomic import write_atomic
target, size = Path(sys.argv[1]), int(sys.argv[2])
print("go", flush=True)
n = 0
while True:
    write_atomic(target, bytes([65 + n % 26]) * size)
    n += 1
"""
SIZE = 8 << 20


def test_the_file_is_replaced_with_the_data(tmp_path: Path) -> None:
    target = tmp_path / "gate.json"
    write_atomic(target, "first\n")
    write_atomic(target, b"second\n")
    assert target.read_bytes() == b"second\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gate.json"]


def test_the_folder_is_made(tmp_path: Path) -> None:
    target = tmp_path / "egress" / "arm" / "clock"
    write_atomic(target, "+0\n")
    assert target.read_text() == "+0\n"


def test_the_mode_asked_for_is_kept_over_a_wider_file(tmp_path: Path) -> None:
    target = tmp_path / "key.pem"
    write_atomic(target, "public\n", mode=0o644)
    previous = os.umask(0o022)
    try:
        write_atomic(target, "private\n", mode=0o600)
    finally:
        os.umask(previous)
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    write_atomic(tmp_path / "run.json", "{}\n")
    assert stat.S_IMODE((tmp_path / "run.json").stat().st_mode) == 0o644 & ~previous


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "run.json"
    write_atomic(target, "old\n")
    with pytest.raises(TypeError):
        write_atomic(target, 12)  # type: ignore[arg-type]
    assert target.read_text() == "old\n"
    (tmp_path / "folder").mkdir()
    with pytest.raises(IsADirectoryError):
        write_atomic(tmp_path / "folder", "x")  # the rename fails after the temp was written
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder", "run.json"]


@pytest.mark.parametrize("delay", [0.05, 0.2, 0.5])
def test_a_writer_killed_mid_write_leaves_a_whole_file_or_none(
    tmp_path: Path, delay: float
) -> None:
    target = tmp_path / "gate.json"
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(target), str(SIZE)],
        stdout=subprocess.PIPE,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert writer.stdout is not None and writer.stdout.readline() == b"go\n"
    time.sleep(delay)
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    if target.exists():
        data = target.read_bytes()
        assert len(data) == SIZE and data == data[:1] * SIZE
    # The data went to an unnamed file (O_TMPFILE, which ext4 and tmpfs have): nothing is left,
    # unless the kill fell in the instant between naming it and the rename; the next write
    # removes that one.
    left = [p.name for p in tmp_path.iterdir() if p != target]
    assert len(left) <= 1 and all(n.startswith(".gate.json.") and n.endswith(".tmp") for n in left)
    write_atomic(target, "next\n")
    assert [p.name for p in tmp_path.iterdir()] == ["gate.json"]


def test_a_dead_writers_temporary_is_removed_and_a_live_ones_kept(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], stdout=subprocess.PIPE
    )
    dead, live = int(done.stdout), os.getpid()
    (tmp_path / f".run.json.{dead}.00c0ffee.tmp").write_text("{half")
    (tmp_path / f".run.json.{live}.00c0ffee.tmp").write_text("{being written")
    (tmp_path / f".other.json.{dead}.00c0ffee.tmp").write_text("{not this file's")
    write_atomic(tmp_path / "run.json", "{}\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        f".other.json.{dead}.00c0ffee.tmp",
        f".run.json.{live}.00c0ffee.tmp",
        "run.json",
    ]


def test_a_file_read_live_only_is_replaced_without_fsyncs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An arm's clock pin (~50 an item) is replaced atomically but not synced: the fsyncs were a
    quarter of the harness process's time in a T1 run (issue 37). A run file keeps both."""
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    target = tmp_path / "clocks" / "arm"
    write_atomic(target, "+1.5\n", durable=False)
    write_atomic(target, "+2.5\n", durable=False)
    assert (target.read_text(), synced) == ("+2.5\n", [])
    assert [p.name for p in target.parent.iterdir()] == ["arm"]
    write_atomic(tmp_path / "run.json", "{}\n")
    assert len(synced) == 2  # the file and its folder
