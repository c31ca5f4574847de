"""rundir/runs/header.py: run.json is written atomically and read in one place, whose one error type
says what to do whether the file is missing, unreadable, invalid or from a newer harness."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rundir.errors import RunDirError
from rundir.runs.header import RunHeader, StudyRun, read_header, write_header


def header() -> RunHeader:
    study = StudyRun(
        name="s",
        study_path="study.toml",
        study_sha256="a" * 64,
        items_sha256="b" * 64,
        isolation="local",
        clock_pinning="seam-only",
        deadline_ms=1000,
    )
    return RunHeader(run_id="r1", mode="record", kind="study", started="now", study=study)


def test_a_written_header_reads_back_the_same(tmp_path: Path) -> None:
    write_header(tmp_path / "run", header())
    assert read_header(tmp_path / "run") == header()
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == ["run.json"]
    saved = json.loads((tmp_path / "run" / "run.json").read_text())
    assert saved["schema"] == 1 and saved["study"]["name"] == "s"


def test_a_missing_header_says_what_to_give(tmp_path: Path) -> None:
    with pytest.raises(RunDirError, match="is not a run directory") as raised:
        read_header(tmp_path)
    assert raised.value.hint and "runs/<run-id>" in raised.value.hint


def test_an_invalid_header_names_the_field(tmp_path: Path) -> None:
    (tmp_path / "run.json").write_text('{"run_id": "r", "mode": "record"}')
    with pytest.raises(RunDirError, match="not a run header this harness reads: started"):
        read_header(tmp_path)
    (tmp_path / "run.json").write_text("{not json")
    with pytest.raises(RunDirError, match="not a run header"):
        read_header(tmp_path)


def test_an_unreadable_header_is_one_error(tmp_path: Path) -> None:
    (tmp_path / "run.json").mkdir()  # unreadable for root too, unlike a chmod 0 file
    with pytest.raises(RunDirError, match="cannot read"):
        read_header(tmp_path)


def test_a_header_from_a_newer_harness_says_to_upgrade(tmp_path: Path) -> None:
    newer = {**header().model_dump(by_alias=True), "schema": 2}
    (tmp_path / "run.json").write_text(json.dumps(newer))
    with pytest.raises(RunDirError, match="schema 2") as raised:
        read_header(tmp_path)
    assert "upgrade harness" in str(raised.value)
