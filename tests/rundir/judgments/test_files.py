"""A judgment set's files (rundir/judgments/files.py): versioned records written and read back,
and a damaged or newer one refused with the file and line that holds it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rundir.errors import RunDirError, SchemaTooNew
from rundir.judgments.files import (
    VoteLog,
    read_manifest,
    read_tasks,
    read_votes,
    write_manifest,
    write_tasks,
)
from rundir.judgments.records import Vote
from tests.rundir.judgments.sets import TASK, manifest


def test_a_set_round_trips(tmp_path: Path) -> None:
    write_tasks(tmp_path / "set", [TASK])
    log = VoteLog(tmp_path / "set")
    log.append(
        Vote(
            task="a1",
            judge="alpha",
            attempt=1,
            prompt_sha256="0" * 64,
            reply_file=None,
            reply_sha256=None,
            status="client_failed",
            detail="timeout",
            elapsed_s=1.0,
        )
    )
    log.close()
    write_manifest(tmp_path / "set", manifest("f" * 64))
    assert read_tasks(tmp_path / "set") == [TASK]
    assert read_votes(tmp_path / "set")[0].detail == "timeout"
    assert read_manifest(tmp_path / "set").seal_sha256 == "f" * 64


def test_a_record_from_a_newer_harness_is_refused_not_half_read(tmp_path: Path) -> None:
    (tmp_path / "tasks.jsonl").write_text(
        json.dumps({**json.loads(TASK.model_dump_json(by_alias=True)), "schema": 2}) + "\n"
    )
    with pytest.raises(SchemaTooNew, match=r"tasks\.jsonl:1: JudgmentTask of schema 2") as raised:
        read_tasks(tmp_path)
    assert "upgrade harness" in str(raised.value.hint)


def test_a_damaged_line_is_named_by_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "votes.jsonl").write_text('{"schema": 1, "task": "a1"}\n')
    with pytest.raises(RunDirError, match=r"votes.jsonl:1: judge"):
        read_votes(tmp_path)
    with pytest.raises(RunDirError, match="is not a judgment set"):
        read_manifest(tmp_path)
