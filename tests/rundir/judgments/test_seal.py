"""A judgment set's seal (rundir/judgments/seal.py): its hash in the manifest, and analysis opening
it only once it binds the manifest, never a seal of another stage or one that cannot be read."""

from __future__ import annotations

from pathlib import Path

import pytest

from rundir.errors import RunDirError
from rundir.judgments.files import read_manifest, write_manifest
from rundir.judgments.seal import Seal, SealedArm, bind_seal, open_seal, write_seal
from tests.rundir.judgments.sets import manifest


def test_a_seal_opens_once_it_binds_the_manifest(tmp_path: Path) -> None:
    seal_sha = write_seal(
        tmp_path / "seal.json",
        Seal(stage="s1", seed=7, codes={"ABCD": SealedArm(run="r", arm="bare")}),
    )
    write_manifest(tmp_path / "set", manifest(seal_sha))
    # Analysis opens a seal only once it binds the manifest (the stage's last write).
    with pytest.raises(RunDirError, match="binds no manifest"):
        open_seal(tmp_path / "set", tmp_path / "seal.json")
    bind_seal(tmp_path / "seal.json", tmp_path / "set")
    assert read_manifest(tmp_path / "set").seal_sha256 == seal_sha  # the body's hash still
    assert open_seal(tmp_path / "set", tmp_path / "seal.json").codes["ABCD"].arm == "bare"


def test_a_manifest_edited_after_binding_is_refused(tmp_path: Path) -> None:
    seal_sha = write_seal(tmp_path / "seal.json", Seal(stage="s1", seed=7, codes={}))
    write_manifest(tmp_path / "set", manifest(seal_sha))
    bind_seal(tmp_path / "seal.json", tmp_path / "set")
    edited = manifest(seal_sha).model_copy(update={"halts": ["added later"]})
    write_manifest(tmp_path / "set", edited)
    with pytest.raises(RunDirError, match="changed after judging"):
        open_seal(tmp_path / "set", tmp_path / "seal.json")


def test_a_seal_of_another_stage_is_refused_even_with_a_matching_hash(tmp_path: Path) -> None:
    seal_sha = write_seal(tmp_path / "seal.json", Seal(stage="s2", seed=7, codes={}))
    write_manifest(tmp_path / "set", manifest(seal_sha))
    with pytest.raises(RunDirError, match="seals stage 's2'"):
        open_seal(tmp_path / "set", tmp_path / "seal.json")
    with pytest.raises(RunDirError, match="cannot read the seal"):
        open_seal(tmp_path / "set", tmp_path / "missing.json")
