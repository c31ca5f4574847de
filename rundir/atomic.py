"""The one way a run-directory file is replaced: temporary file, fsync, rename, fsync the folder.

A reader sees the old file or the new one, never half of either, and after a crash (kill -9, power)
the rename is durable too: without the folder's fsync a renamed file can come back empty on ext4.
The data is written into an unnamed file (O_TMPFILE) where the file system allows, so a writer
killed mid-write leaves no temporary behind either; elsewhere a hidden `.<name>.<pid>.<hex>.tmp`,
which the next write of the file removes once its writer is dead.
"""

from __future__ import annotations

import errno
import glob
import os
import secrets
from pathlib import Path


def fsync_dir(directory: Path) -> None:
    """Make a rename or a new file in `directory` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, data: bytes | str, mode: int = 0o644, durable: bool = True) -> None:
    """Replace `path` with `data` (str is written as UTF-8); `mode` is the new file's permissions
    (0o600 for a private key), less the umask as for any new file. The folder is made if missing.
    `durable=False` keeps the atomic replace but skips both fsyncs: for a file only live
    processes read (an arm's clock pin, ~50 an item), which a crash makes moot anyway.
    """
    payload = data.encode("utf-8") if isinstance(data, str) else data
    path.parent.mkdir(parents=True, exist_ok=True)
    # Unique per call (two threads may replace one file), hidden, and ending in .tmp, which the
    # audit ignores. The file is created with `mode` from the start: a key is never readable by
    # others, even for a moment.
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd, anonymous = _open_temp(path.parent, tmp, mode)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
            f.flush()
            if durable:
                os.fsync(f.fileno())
            if anonymous:
                # Named only now, for the rename: a writer killed while writing leaves nothing.
                _name(f.fileno(), tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if durable:
        fsync_dir(path.parent)
    _sweep(path)


def _sweep(path: Path) -> None:
    """Remove the temporaries of writers of `path` that died between naming theirs and the
    rename (an instant, but kill -9 can land there); a live writer's is left alone."""
    for stale in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
        pid = stale.name[len(path.name) + 2 :].split(".", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            stale.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process: alive
    return True


def _open_temp(folder: Path, tmp: Path, mode: int) -> tuple[int, bool]:
    """An unnamed file in `folder` (O_TMPFILE) where the file system has them, else `tmp`."""
    if hasattr(os, "O_TMPFILE"):
        try:
            return os.open(folder, os.O_TMPFILE | os.O_WRONLY, mode), True
        except OSError as e:
            if e.errno not in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL):
                raise
    return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode), False


def _name(fd: int, tmp: Path) -> None:
    # linkat(AT_SYMLINK_FOLLOW) of /proc/self/fd/N links the open file itself. os.link calls
    # plain link() (which would link the /proc symlink) unless a dir fd is given: hence one.
    folder = os.open(tmp.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.link(f"/proc/self/fd/{fd}", tmp.name, dst_dir_fd=folder, follow_symlinks=True)
    finally:
        os.close(folder)
