"""A disk that can really fill up under the proxy: a small tmpfs of a test's own (root only)."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def mounted_tmpfs(mount: Path, size: str = "64k") -> Iterator[Path]:
    """A `size` tmpfs mounted at `mount` (created), unmounted on exit."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root (CI and the docker tests run as root)")
    mount.mkdir(parents=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount)], check=True)
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=True)


def fill(disk: Path) -> None:
    """Write to `disk` until it is full (ENOSPC)."""
    fd = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        with contextlib.suppress(OSError):  # ENOSPC: full
            while os.write(fd, b"x" * 512):
                pass
    finally:
        os.close(fd)
