"""Snapshots of an arm's state folder (seam v2): taken once a history is ingested, copied back
for each question so every question reads the store as it stood after ingestion.

The folder is copied with the arm stopped (its engine has flushed and closed its files), symlinks
kept as links (never followed: the arm wrote them). The hash covers every file's path relative to
the folder and its bytes, in sorted order, so the same store gives the same hash and a copy can be
checked against it. A copy that fails, or whose hash differs, is an infrastructure failure.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from harness.isolation import InfraError

_CHUNK = 1 << 20


class SnapshotError(InfraError):
    """A snapshot that could not be taken or copied back: the item's comparison is void, so the
    orchestrator fails the item in every arm (harness/run/orchestrator.py)."""


@dataclass(frozen=True)
class TreeHash:
    sha256: str
    files: int
    bytes: int


def tree_hash(folder: Path) -> TreeHash:
    digest = hashlib.sha256()
    files = size = 0
    for root, dirs, names in os.walk(folder, followlinks=False):
        dirs.sort()
        for name in sorted(names):
            path = Path(root) / name
            relative = path.relative_to(folder).as_posix()
            digest.update(f"{len(relative)}:{relative}".encode())
            if path.is_symlink():
                digest.update(b"L" + os.readlink(path).encode())
                files += 1
                continue
            digest.update(b"F")
            with open(path, "rb") as f:
                while chunk := f.read(_CHUNK):
                    digest.update(chunk)
                    size += len(chunk)
            files += 1
    return TreeHash(digest.hexdigest(), files, size)


def _replace(source: Path, target: Path) -> None:
    if target.exists() or target.is_symlink():
        shutil.rmtree(target)
    shutil.copytree(source, target, symlinks=True)


def take(state: Path, snapshot: Path) -> TreeHash:
    """Copy the (stopped) arm's folder to `snapshot`; the copy's hash."""
    try:
        state.mkdir(parents=True, exist_ok=True)
        snapshot.parent.mkdir(parents=True, exist_ok=True)
        _replace(state, snapshot)
        return tree_hash(snapshot)
    except OSError as e:
        raise SnapshotError(f"snapshot of {state} failed: {e}") from e


def restore(snapshot: Path, state: Path, expected: str) -> None:
    """Make `state` a fresh copy of `snapshot`, checked against the hash it was taken with."""
    try:
        _replace(snapshot, state)
        got = tree_hash(state).sha256
    except OSError as e:
        raise SnapshotError(f"copying snapshot {snapshot} to {state} failed: {e}") from e
    if got != expected:
        raise SnapshotError(
            f"the copy of snapshot {snapshot} hashes {got[:12]}, not {expected[:12]}"
        )


def empty(state: Path) -> None:
    """A fresh, empty folder for a history's ingestion."""
    try:
        if state.exists():
            shutil.rmtree(state)
        state.mkdir(parents=True)
    except OSError as e:
        raise InfraError(f"cannot empty the arm's state folder {state}: {e}") from e
