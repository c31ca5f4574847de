"""One bounded disk per arm container: an ext4 image on a loop device holding everything the arm
can write (its log folder, its egress folder, its /tmp), so a disk filler stops at the study's
`disk` bound with ENOSPC instead of filling the host.

Why a loop image and not the alternatives, on docker.io 20.10 and 28 with overlay2 on ext4:
- `--storage-opt size=` bounds a container's writable layer only on xfs with project quotas;
  here (and on most hosts) the backing filesystem is ext4, so it is refused. The arm's root
  filesystem is therefore read-only (`--read-only`) and all its writable places live here.
- tmpfs mounts (`--tmpfs /tmp:size=`) take a size, but their pages are charged to the arm's
  memory cgroup, and the harness reads the log and egress folders from the host while the run
  goes on, which a tmpfs inside the container hides.
- A loop-mounted ext4 image works on any engine version (the container sees plain bind mounts),
  the kernel enforces the size, the harness reads the files live from the host, and what is in
  it outlives the container (an OOM-killed arm's log is still there).

Layout: `<run>/.disk/<arm>.img` (sparse: only what the arm writes takes space) mounted at
`<run>/.disk/<arm>/`, whose `logs/`, `egress/` and `tmp/` are bind-mounted on the host onto
`<run>/logs/<arm>/` and `<run>/egress/<arm>/` (the paths every reader already uses) and into the
container. At the end the folders are copied out as plain files (regular files, folders and
symlinks as symlinks, nothing else: an arm's fifo cannot stall the copy), every mount is undone
and the image deleted; `harness cleanup` undoes what a crashed run left (`release_all`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import subprocess
from pathlib import Path

DISK_DIR = ".disk"
# Less than this left (or no inode left) is a full disk: the arm met its bound. ext4 refuses a
# write with about 1 MiB still free (blocks it holds back for delayed allocation and metadata),
# so the margin is a few MiB, or 1/64 of a large disk.
FULL_BELOW = 4 * 1024 * 1024
PARTS = ("logs", "egress", "tmp")


class DiskError(RuntimeError):
    """A bounded disk could not be made or mounted; the message says what failed."""


def _run(*argv: str) -> None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    except FileNotFoundError as e:
        raise DiskError(f"{argv[0]} is not installed (apt-get install -y e2fsprogs mount)") from e
    if done.returncode != 0:
        raise DiskError(f"{' '.join(argv)}: {done.stderr.strip() or done.stdout.strip()}")


class ArmDisk:
    def __init__(self, run_dir: Path, arm: str, size: int) -> None:
        self.run_dir = run_dir
        self.arm = arm
        self.size = size
        self.image = run_dir / DISK_DIR / f"{arm}.img"
        self.root = run_dir / DISK_DIR / arm
        self.logs = run_dir / "logs" / arm
        self.egress = run_dir / "egress" / arm
        self.mounted = False

    @property
    def tmp(self) -> Path:
        return self.root / "tmp"

    def binds(self) -> list[tuple[Path, Path]]:
        """(folder on the disk, the run folder it is mounted on), for the host's bind mounts."""
        return [(self.root / "logs", self.logs), (self.root / "egress", self.egress)]

    def make(self) -> None:
        """Create, format and mount the image, then bind its folders where the run reads them.
        A restarted arm keeps its disk and what it wrote to its folders, but gets an empty
        /tmp as any fresh container would (a disk filled through /tmp frees up)."""
        if self.mounted:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp.mkdir(exist_ok=True)
            os.chmod(self.tmp, 0o1777)
            return
        self.root.mkdir(parents=True, exist_ok=True)
        try:
            with open(self.image, "xb") as f:  # sparse: no block is written until the arm writes
                f.truncate(self.size)
        except FileExistsError as e:
            raise DiskError(f"{self.image} exists already (another run's?)") from e
        # No reserved blocks (the arm gets all of `disk`), no journal (nothing to replay: the
        # image is thrown away), lazy init (formatting 2 GiB takes a fraction of a second).
        _run("mkfs.ext4", "-q", "-F", "-m", "0", "-O", "^has_journal",
             "-E", "lazy_itable_init=1,lazy_journal_init=1", str(self.image))  # fmt: skip
        _run("mount", "-o", "loop,nosuid,nodev", str(self.image), str(self.root))
        self.mounted = True
        with contextlib.suppress(OSError):
            (self.root / "lost+found").rmdir()
        for part in PARTS:
            (self.root / part).mkdir(exist_ok=True)
        os.chmod(self.tmp, 0o1777)
        for source, target in self.binds():
            target.mkdir(parents=True, exist_ok=True)
            _run("mount", "--bind", str(source), str(target))

    def full(self) -> bool:
        """Whether the arm has used up its disk (bytes or inodes)."""
        try:
            st = os.statvfs(self.root)
        except OSError:
            return False
        margin = max(FULL_BELOW, self.size // 64)
        return st.f_bavail * st.f_frsize < margin or (st.f_files > 0 and st.f_favail == 0)

    def release(self) -> None:
        """Copy the arm's folders out as plain files in the run, undo every mount, delete the
        image. Safe to call twice, and after a partial make."""
        for source, target in self.binds():
            if os.path.ismount(target):
                _run("umount", "-l", str(target))
            if source.is_dir():
                copy_out(source, target)
        if os.path.ismount(self.root):
            _run("umount", "-l", str(self.root))  # lazy: a container that outlived stop pins it
        self.mounted = False
        with contextlib.suppress(OSError):
            self.image.unlink()
        with contextlib.suppress(OSError):
            self.root.rmdir()
        with contextlib.suppress(OSError):
            (self.run_dir / DISK_DIR).rmdir()


def copy_out(source: Path, target: Path) -> None:
    """The arm's files as plain files: folders, regular files, symlinks kept as symlinks (never
    followed); fifos, sockets and devices are skipped (reading a fifo would block)."""
    target.mkdir(parents=True, exist_ok=True)
    for entry in os.scandir(source):
        to = target / entry.name
        mode = entry.stat(follow_symlinks=False).st_mode
        if stat.S_ISLNK(mode):
            with contextlib.suppress(OSError):
                to.symlink_to(os.readlink(entry.path))
        elif stat.S_ISDIR(mode):
            copy_out(Path(entry.path), to)
        elif stat.S_ISREG(mode):
            fd = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            with os.fdopen(fd, "rb") as src, open(to, "wb") as dst:
                shutil.copyfileobj(src, dst, 1024 * 1024)


def release_all(run_dir: Path) -> list[str]:
    """Every bounded disk a crashed run left in `run_dir`: copied out, unmounted, deleted."""
    done: list[str] = []
    disks = run_dir / DISK_DIR
    if not disks.is_dir():
        return done
    for image in sorted(disks.glob("*.img")):
        disk = ArmDisk(run_dir, image.stem, 0)
        try:
            disk.release()
            done.append(f"released the disk of arm {image.stem} in {run_dir}")
        except DiskError as e:
            done.append(f"could not release {image}: {e}")
    return done


def release_left(run_root: Path) -> list[str]:
    """`harness cleanup`: the disks of runs under `run_root` that no container of theirs uses any
    more (their run crashed; a run still going keeps its containers, so its disks are kept)."""
    from harness.isolation.docker.cli import DockerError, docker
    from harness.isolation.owner import RUN_LABEL

    done: list[str] = []
    for disks in sorted(run_root.glob(f"*/{DISK_DIR}")):
        run_dir = disks.parent
        try:
            users = docker(["ps", "-aq", "--filter", f"label={RUN_LABEL}={run_dir.name}"])
        except DockerError:
            continue  # no engine to ask: leave them rather than pull them from under a run
        if not users.strip():
            done += release_all(run_dir)
    return done
