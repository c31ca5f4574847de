"""voids.jsonl (rundir/voids.py): append-only dated records of items set aside after a run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rundir.errors import RunDirError
from rundir.voids import VOIDS_FILE, VoidRecord, append_void, read_voids, voided_items


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
