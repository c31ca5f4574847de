"""voids.jsonl (rundir/runs/voids.py): append-only dated records of items set aside after a run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rundir.errors import RunDirError
from rundir.runs.manifest import Manifest
from rundir.runs.voids import (
    VOIDS_FILE,
    VoidRecord,
    append_void,
    chain_next,
    read_voids,
    void_problems,
    voided_items,
)


def _record(items: list[str], reason: str) -> VoidRecord:
    return VoidRecord(run_id="r1", voided="2024-05-01T10:00:00.000+00:00", items=items,
                      reason=reason)  # fmt: skip


def test_records_append_and_reasons_of_one_item_are_joined(tmp_path: Path) -> None:
    assert read_voids(tmp_path) == [] and voided_items(tmp_path) == {}
    append_void(tmp_path, _record(["a", "b"], "first defect"))
    append_void(tmp_path, _record(["b"], "second defect"))
    lines = (tmp_path / VOIDS_FILE).read_text().splitlines()
    assert [json.loads(line)["items"] for line in lines] == [["a", "b"], ["b"]]
    assert json.loads(lines[0])["schema"] == 1
    assert voided_items(tmp_path) == {"a": "first defect", "b": "first defect; second defect"}


def test_a_record_needs_items_and_a_reason() -> None:
    with pytest.raises(ValueError):
        _record([], "why")
    with pytest.raises(ValueError):
        _record(["a"], "")


def test_a_record_of_a_newer_schema_is_refused_not_half_read(tmp_path: Path) -> None:
    line = _record(["a"], "why").model_dump(by_alias=True) | {"schema": 2}
    (tmp_path / VOIDS_FILE).write_text(json.dumps(line) + "\n")
    with pytest.raises((RunDirError, ValueError), match="schema"):
        read_voids(tmp_path)


def _manifest() -> Manifest:
    return Manifest(written="2024-05-01T11:00:00Z", tool_version="1", study_sha256="ab" * 32)


def _void(run_dir: Path, manifest: Manifest, items: list[str], run_id: str = "r1") -> None:
    """What `harness void` does: chain the record, then move the manifest's count and head."""
    record = _record(items, "why").model_copy(
        update={"run_id": run_id, "prev": chain_next(run_dir, manifest)}
    )
    manifest.voids_head = append_void(run_dir, record)
    manifest.voids += 1


def test_a_chained_void_passes_and_every_forgery_is_named(tmp_path: Path) -> None:
    manifest = _manifest()
    _void(tmp_path, manifest, ["a"])
    _void(tmp_path, manifest, ["b"])
    ran = {"a", "b"}
    assert void_problems(tmp_path, "r1", manifest, ran) == []
    kept = (tmp_path / VOIDS_FILE).read_bytes()
    first, second = kept.splitlines()

    # Copied from another run (its chain starts at another manifest).
    other = _manifest().model_copy(update={"study_sha256": "cd" * 32})
    (tmp_path / VOIDS_FILE).write_bytes(first + b"\n" + second + b"\n")
    assert void_problems(tmp_path, "r1", other, ran)[0].startswith(
        "line 1 does not follow the run's manifest"
    )
    # A line cut from the end, or from the middle.
    (tmp_path / VOIDS_FILE).write_bytes(first + b"\n")
    assert "run.json's manifest records 2 void record(s); the file holds 1" in void_problems(
        tmp_path, "r1", manifest, ran
    )
    (tmp_path / VOIDS_FILE).write_bytes(second + b"\n")
    assert (
        "line 1 does not follow the run's manifest"
        in void_problems(tmp_path, "r1", manifest, ran)[0]
    )
    # Deleted.
    (tmp_path / VOIDS_FILE).unlink()
    assert void_problems(tmp_path, "r1", manifest, ran) == [
        "run.json's manifest records 2 void record(s); the file is missing"
    ]
    # Another run's id, an item that never ran, even when chained properly.
    (tmp_path / VOIDS_FILE).write_bytes(kept)
    _void(tmp_path, manifest, ["zz"], run_id="r2")
    problems = void_problems(tmp_path, "r1", manifest, ran)
    assert problems == [
        "line 3 voids items of run r2, not of this run",
        "line 3 voids item(s) that never ran here: zz",
    ]


def test_voids_written_before_chaining_are_still_read(tmp_path: Path) -> None:
    append_void(tmp_path, _record(["a"], "old"))
    assert void_problems(tmp_path, "r1", _manifest(), {"a"}) == []
