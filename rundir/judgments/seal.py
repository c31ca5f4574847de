"""A judgment set's seal: what each arm code means (code -> run and arm) and the seed the codes
were drawn from, in a file kept outside the set. The manifest holds the seal's SHA-256 and the
seal, once bound, the manifest's: analysis opens the seal (`open_seal`) only when both agree."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError

from rundir.atomic import write_atomic
from rundir.errors import RunDirError
from rundir.judgments.files import MANIFEST_FILE, pretty_json, read_manifest, sha256_bytes
from rundir.judgments.records import JUDGMENT_SET_SCHEMA, SetRecord
from rundir.model import RunDirModel


class SealedArm(SetRecord):
    run: str
    arm: str


class Seal(RunDirModel):
    schema_: Literal[1] = Field(JUDGMENT_SET_SCHEMA, alias="schema")
    stage: str
    seed: int
    codes: dict[str, SealedArm]
    # The SHA-256 of the set's judgments.json as the stage wrote it (`bind_seal`): a manifest
    # edited afterwards is refused. The manifest holds the hash of the seal without this field.
    manifest_sha256: str | None = None


def _seal_body_sha(seal: Seal) -> str:
    """The SHA-256 the manifest holds: the seal as written before it was bound to the manifest."""
    body = seal.model_dump(mode="json", by_alias=True, exclude={"manifest_sha256"})
    return sha256_bytes((json.dumps(body, indent=2) + "\n").encode("utf-8"))


def write_seal(path: Path, seal: Seal) -> str:
    """Write the seal (owner-readable only) and return its SHA-256 for the manifest."""
    write_atomic(path, pretty_json(seal.model_copy(update={"manifest_sha256": None})), mode=0o600)
    return _seal_body_sha(seal)


def bind_seal(path: Path, set_dir: Path) -> None:
    """Write into the seal the SHA-256 of the set's judgments.json, once it is written: the seal,
    kept outside the set, then says which manifest is the stage's own."""
    seal = Seal.model_validate_json(path.read_bytes())
    bound = seal.model_copy(
        update={"manifest_sha256": sha256_bytes((set_dir / MANIFEST_FILE).read_bytes())}
    )
    write_atomic(path, pretty_json(bound), mode=0o600)


def read_seal(set_dir: Path, seal_path: Path) -> Seal:
    """The seal of `set_dir`, checked against the hash its manifest holds (not yet whether it
    binds the manifest as it is now: `seal_binding`)."""
    manifest = read_manifest(set_dir)
    try:
        data = seal_path.read_bytes()
    except OSError as e:
        raise RunDirError(f"cannot read the seal {seal_path}: {e}", hint="give --seal") from None
    try:
        seal: Seal | None = Seal.model_validate_json(data)
    except ValidationError:
        seal = None  # not a seal: not this set's either
    if seal is None or _seal_body_sha(seal) != manifest.seal_sha256:
        raise RunDirError(
            f"{seal_path} is not the seal of {set_dir} (its SHA-256 differs from the manifest's)",
            hint="give the seal file `harness judge` wrote beside this set",
        )
    if seal.stage != manifest.stage:
        raise RunDirError(f"{seal_path} seals stage {seal.stage!r}, the set is {manifest.stage!r}")
    return seal


def seal_binding(set_dir: Path, seal_path: Path, seal: Seal) -> str | None:
    """Why the set's judgments.json is not the one its seal binds (None: it is)."""
    if seal.manifest_sha256 is None:
        return (
            f"{seal_path} binds no manifest: {MANIFEST_FILE} cannot be told from an edited one "
            "(judge again: a stage binds its seal to the manifest it writes)"
        )
    if sha256_bytes((set_dir / MANIFEST_FILE).read_bytes()) != seal.manifest_sha256:
        return (
            f"{MANIFEST_FILE} is not the manifest its seal binds (SHA-256 in {seal_path.name}): "
            "it was changed after judging"
        )
    return None


def open_seal(set_dir: Path, seal_path: Path) -> Seal:
    """The seal of `set_dir`, checked against the hash its manifest holds, and binding the
    manifest as it is: analysis only."""
    seal = read_seal(set_dir, seal_path)
    unbound = seal_binding(set_dir, seal_path, seal)
    if unbound is not None:
        raise RunDirError(
            f"{set_dir}: {unbound}",
            hint="judge again; a judgment set's manifest is written once, by `harness judge`",
        )
    return seal
