"""The judgment-set format (rundir/judgments.py): versioned records, the seal and its hash."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rundir.errors import RunDirError, SchemaTooNew
from rundir.judgments import (
    JudgmentSet,
    JudgmentTask,
    Seal,
    SealedArm,
    Vote,
    VoteLog,
    bind_seal,
    open_seal,
    read_manifest,
    read_tasks,
    read_votes,
    write_manifest,
    write_seal,
    write_tasks,
)

TASK = JudgmentTask(
    id="a1",
    judgment="flag:g:i:0:ABCD",
    rubric="g",
    kind="flag",
    judge="alpha",
    role="confirmatory",
    phase="confirmatory",
    item="i",
    turn=0,
    labels=["ABCD"],
    prompt_sha256="0" * 64,
)


def _manifest(seal_sha: str) -> JudgmentSet:
    return JudgmentSet(
        stage="s1",
        written="now",
        tool_version="0",
        runs=[],
        judges=[],
        rubrics=[],
        templates={},
        seal_sha256=seal_sha,
        tasks_sha256="",
        votes_sha256="",
    )


def test_a_set_round_trips(tmp_path: Path) -> None:
    seal_sha = write_seal(
        tmp_path / "seal.json",
        Seal(stage="s1", seed=7, codes={"ABCD": SealedArm(run="r", arm="bare")}),
    )
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
    write_manifest(tmp_path / "set", _manifest(seal_sha))
    assert read_tasks(tmp_path / "set") == [TASK]
    assert read_votes(tmp_path / "set")[0].detail == "timeout"
    assert read_manifest(tmp_path / "set").seal_sha256 == seal_sha
    # Analysis opens a seal only once it binds the manifest (the stage's last write).
    with pytest.raises(RunDirError, match="binds no manifest"):
        open_seal(tmp_path / "set", tmp_path / "seal.json")
    bind_seal(tmp_path / "seal.json", tmp_path / "set")
    assert read_manifest(tmp_path / "set").seal_sha256 == seal_sha  # the body's hash still
    assert open_seal(tmp_path / "set", tmp_path / "seal.json").codes["ABCD"].arm == "bare"


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


def test_a_seal_of_another_stage_is_refused_even_with_a_matching_hash(tmp_path: Path) -> None:
    seal_sha = write_seal(tmp_path / "seal.json", Seal(stage="s2", seed=7, codes={}))
    write_manifest(tmp_path / "set", _manifest(seal_sha))
    with pytest.raises(RunDirError, match="seals stage 's2'"):
        open_seal(tmp_path / "set", tmp_path / "seal.json")
    with pytest.raises(RunDirError, match="cannot read the seal"):
        open_seal(tmp_path / "set", tmp_path / "missing.json")
