import os
from pathlib import Path

import pytest

from harness.isolation.base import InfraError
from harness.run.memory import snapshot


def _store(folder: Path) -> Path:
    (folder / "qdrant" / "collection").mkdir(parents=True)
    (folder / "qdrant" / "collection" / "points.bin").write_bytes(b"\x00\x01" * 1000)
    (folder / "history.db").write_text("rows")
    os.symlink("/etc/passwd", folder / "planted")  # an arm's link: copied as a link, not followed
    return folder


def test_a_snapshot_copies_and_hashes_the_store(tmp_path: Path) -> None:
    state = _store(tmp_path / "state")
    taken = snapshot.take(state, tmp_path / "snapshots" / "h1")
    assert (taken.files, taken.bytes) == (3, 2004)
    assert snapshot.tree_hash(state) == taken
    assert (tmp_path / "snapshots" / "h1" / "planted").is_symlink()
    # The question's copy: the arm wrote into the old one; the copy is the snapshot again.
    (state / "history.db").write_text("rows and the question's own")
    (state / "extra").write_text("new")
    snapshot.restore(tmp_path / "snapshots" / "h1", state, taken.sha256)
    assert snapshot.tree_hash(state).sha256 == taken.sha256
    assert not (state / "extra").exists()


def test_the_hash_sees_a_changed_byte_a_renamed_file_and_a_moved_link(tmp_path: Path) -> None:
    state = _store(tmp_path / "state")
    first = snapshot.tree_hash(state).sha256
    (state / "history.db").write_text("rowz")
    assert snapshot.tree_hash(state).sha256 != first
    (state / "history.db").write_text("rows")
    assert snapshot.tree_hash(state).sha256 == first
    (state / "history.db").rename(state / "history2.db")
    assert snapshot.tree_hash(state).sha256 != first
    (state / "history2.db").rename(state / "history.db")
    (state / "planted").unlink()
    os.symlink("/etc/hosts", state / "planted")
    assert snapshot.tree_hash(state).sha256 != first


def test_a_copy_that_does_not_match_is_an_infrastructure_failure(tmp_path: Path) -> None:
    state = _store(tmp_path / "state")
    taken = snapshot.take(state, tmp_path / "snap")
    (tmp_path / "snap" / "history.db").write_text("tampered")
    with pytest.raises(InfraError, match="hashes"):
        snapshot.restore(tmp_path / "snap", state, taken.sha256)
    with pytest.raises(InfraError, match="failed"):
        snapshot.restore(tmp_path / "missing", state, taken.sha256)


def test_empty_makes_a_fresh_folder(tmp_path: Path) -> None:
    state = _store(tmp_path / "state")
    snapshot.empty(state)
    assert state.is_dir() and not any(state.iterdir())
