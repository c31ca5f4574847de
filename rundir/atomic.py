"""The one way a run-directory file is replaced: temporary file, fsync, rename, fsync the folder.

A reader sees the old file or the new one, never half of either, and after a crash (kill -9, power)
the rename is durable too: without the folder's fsync a renamed file can come back empty on ext4.
"""

from __future__ import annotations

import os
from pathlib import Path


def fsync_dir(directory: Path) -> None:
    """Make a rename or a new file in `directory` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, data: bytes | str, mode: int = 0o644) -> None:
    """Replace `path` with `data` (str is written as UTF-8); `mode` is the new file's permissions
    (0o600 for a private key)."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)
